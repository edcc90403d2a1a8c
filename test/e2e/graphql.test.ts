import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

/** The GraphQL door over HTTP: credentials, the same domain rules as REST, errors and limits. */
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '1' });

const TEXT_MODEL = 'svc-2.5-preview-text-to-video';

const gql = (query: string, opts: { token?: string; variables?: Record<string, unknown> } = {}) =>
  gw.api('POST', '/graphql', { token: opts.token, body: { query, variables: opts.variables } });

const codes = (res: { body: any }) => (res.body.errors ?? []).map((e: any) => e.extensions?.code);

const QUEUE = `mutation($input: QueueVideoInput!) { queueVideo(input: $input) { id queueId model status creditsCharged creditsUsed url reason createdAt updatedAt } }`;

describe('credentials', () => {
  let acct: TestAccount;
  let key: { id: string; secret: string };
  beforeAll(async () => {
    acct = await gw.newAccount(100);
    key = await gw.newKey(acct);
  });

  test('an API key reads the models, with typed pricing', async () => {
    const res = await gql(
      '{ models { id ownedBy capabilities created pricing { creditsPer10kTokens creditsPerImage creditsPerSecond video { duration resolution credits } } } }',
      { token: key.secret },
    );
    expect(res.status).toBe(200);
    const models = res.body.data.models as any[];
    const rest = await gw.api('GET', '/v1/models', { token: key.secret });
    expect(models.map((m) => m.id)).toEqual(rest.body.data.map((m: any) => m.id));
    const video = models.find((m) => m.id === TEXT_MODEL);
    expect(video.capabilities).toEqual(['video']);
    expect(video.pricing.video).toContainEqual({ duration: '5s', resolution: '720p', credits: expect.any(Number) });
    expect(models.find((m) => m.id === 'svc-chat-1').pricing.creditsPer10kTokens).toBe(1);
  });

  test('an ID token manages the account: account, apiKeys, createApiKey', async () => {
    const account = await gql('{ account { id balance member created } }', { token: acct.idToken });
    expect(account.body.data.account).toEqual({ id: acct.id, balance: 100, member: false, created: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });

    const created = await gql(
      `mutation { createApiKey(input: { name: "dash", mode: TEST, blockedModels: ["svc-chat-1"], dailySpendCap: 12.5 }) {
        id name mode allowedModels blockedModels dailySpendCap webhook { url } created lastUsed key } }`,
      { token: acct.idToken },
    );
    const k = created.body.data.createApiKey;
    expect(k).toMatchObject({
      name: 'dash',
      mode: 'TEST',
      allowedModels: null,
      blockedModels: ['svc-chat-1'],
      dailySpendCap: 12.5,
      webhook: null,
      lastUsed: null,
    });
    expect(k.id).toMatch(/^svc_test_[A-Za-z0-9]+$/);
    expect(k.key).toMatch(/^svc_test_[A-Za-z0-9_]+$/);

    const list = await gql('{ apiKeys { id name mode } }', { token: acct.idToken });
    expect(list.body.data.apiKeys.map((x: any) => x.id)).toEqual(expect.arrayContaining([key.id, k.id]));
    // The new secret works as a key at once.
    expect((await gql('{ models { id } }', { token: k.key })).body.data.models.length).toBeGreaterThan(5);
  });

  test('the wrong kind of credential is a permission_error; none is an authentication_error', async () => {
    // The catalog is no secret: the owner's console reads it to pick key permissions.
    expect((await gql('{ models { id } }', { token: acct.idToken })).body.data.models.length).toBeGreaterThan(5);
    expect(codes(await gql('{ videoQuote(input: { model: "svc-2.5-preview-text-to-video" }) { credits } }', { token: acct.idToken }))).toEqual([
      'permission_error',
    ]);
    expect(codes(await gql('{ account { id } }', { token: key.secret }))).toEqual(['permission_error']);
    expect(codes(await gql('mutation { createApiKey(input: {}) { id } }', { token: key.secret }))).toEqual(['permission_error']);
    expect(codes(await gql(QUEUE, { token: acct.idToken, variables: { input: { model: TEXT_MODEL, prompt: 'x' } } }))).toEqual(['permission_error']);
    expect(codes(await gql('{ account { id } }'))).toEqual(['authentication_error']);
    expect(codes(await gql('{ models { id } }'))).toEqual(['authentication_error']);
  });

  test.each([
    ['an unknown key', 'svc_live_unknown_0123456789'],
    ['a malformed token', 'not-a-jwt'],
  ])('%s answers 401 before any resolver', async (_name, token) => {
    const res = await gql('{ models { id } }', { token });
    expect(res.status).toBe(401);
    expect(res.body.errors[0].extensions).toEqual({ code: 'authentication_error', reason: 'invalid_api_key' });
    expect(res.body.data).toBeUndefined();
  });

  test('both credentials read the account jobs; another account sees not_found_error', async () => {
    const queued = await gql(QUEUE, { token: key.secret, variables: { input: { model: TEXT_MODEL, prompt: 'a fox', duration: '5s', resolution: '480p' } } });
    const job = queued.body.data.queueVideo;
    expect(job).toMatchObject({ model: TEXT_MODEL, status: 'PROCESSING', creditsUsed: null, url: null, reason: null });
    expect(job.creditsCharged).toBeGreaterThan(0);
    expect(await gw.balance(acct)).toBe(100 - job.creditsCharged);

    for (const token of [key.secret, acct.idToken]) {
      const one = await gql('query($id: ID!) { videoJob(id: $id) { id status } }', { token, variables: { id: job.id } });
      expect(one.body.data.videoJob).toEqual({ id: job.id, status: 'PROCESSING' });
    }
    const other = await gw.newAccount();
    const otherKey = await gw.newKey(other);
    const res = await gql('query($id: ID!) { videoJob(id: $id) { id } }', { token: otherKey.secret, variables: { id: job.id } });
    expect(res.body.data.videoJob).toBeNull();
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'not_found_error', param: 'id' });
  });
});

describe('the same domain rules as REST', () => {
  test('a blocked model answers model_forbidden and charges nothing', async () => {
    const acct = await gw.newAccount(100);
    const key = await gw.newKey(acct, { blockedModels: [TEXT_MODEL] });
    const res = await gql(QUEUE, { token: key.secret, variables: { input: { model: TEXT_MODEL, prompt: 'a cat' } } });
    expect(res.body.errors[0].extensions).toEqual({ code: 'model_forbidden', param: 'model' });
    expect(res.body.data).toBeNull();
    expect(await gw.balance(acct)).toBe(100);
  });

  test('invalid input answers invalid_request_error naming the input field as GraphQL spells it', async () => {
    const acct = await gw.newAccount(100);
    const key = await gw.newKey(acct);
    const bad = async (input: Record<string, unknown>) =>
      (await gql(QUEUE, { token: key.secret, variables: { input: { model: TEXT_MODEL, ...input } } })).body.errors[0].extensions;
    expect(await bad({ prompt: 'x', resolution: '999p' })).toMatchObject({ code: 'invalid_request_error', param: 'resolution' });
    expect(await bad({ prompt: 'x', aspectRatio: '2:1' })).toMatchObject({ code: 'invalid_request_error', param: 'aspectRatio' });
    expect(await bad({})).toMatchObject({ code: 'invalid_request_error', param: 'prompt' });
    expect(await bad({ prompt: 'x', imageUrl: 'https://example.com/a.png' })).toMatchObject({ code: 'invalid_request_error', param: 'imageUrl' });
    // The message names the field as the client wrote it too; an item of a list by its index.
    const refs = await gql(QUEUE, {
      token: key.secret,
      variables: { input: { model: TEXT_MODEL, prompt: 'x', referenceImageUrls: ['https://example.com/a.png', 'http://10.0.0.1/b.png'] } },
    });
    expect(refs.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: expect.stringMatching(/^referenceImageUrls/) });
    expect(refs.body.errors[0].message).not.toMatch(/_/);
    // The idempotency key is GraphQL's argument here, not REST's header.
    const idem = await gql('mutation($i: QueueVideoInput!, $k: String) { queueVideo(input: $i, idempotencyKey: $k) { id } }', {
      token: key.secret,
      variables: { i: { model: TEXT_MODEL, prompt: 'x' }, k: '' },
    });
    expect(idem.body.errors[0]).toMatchObject({
      message: expect.stringMatching(/^Invalid 'idempotencyKey'/),
      extensions: { code: 'invalid_request_error', param: 'idempotencyKey' },
    });
    // A GraphQL type error is GraphQL's own, with its message.
    const wrongType = await gql(QUEUE, { token: key.secret, variables: { input: { model: TEXT_MODEL, audio: 'yes' } } });
    expect(wrongType.status).toBe(400);
    expect(codes(wrongType)).toEqual(['BAD_USER_INPUT']);
  });

  test('insufficient_credits, and a quote equal to REST', async () => {
    const acct = await gw.newAccount(0);
    const key = await gw.newKey(acct);
    const res = await gql(QUEUE, { token: key.secret, variables: { input: { model: TEXT_MODEL, prompt: 'x' } } });
    expect(codes(res)).toEqual(['insufficient_credits']);

    const quote = await gql(
      'query($i: VideoQuoteInput!) { videoQuote(input: $i) { model duration resolution credits estimatedCostUsd { member nonMember } } }',
      { token: key.secret, variables: { i: { model: TEXT_MODEL, duration: '10s', resolution: '1080p' } } },
    );
    const rest = await gw.api('POST', '/v1/video/quote', { token: key.secret, body: { model: TEXT_MODEL, duration: '10s', resolution: '1080p' } });
    expect(quote.body.data.videoQuote).toEqual(rest.body);
    const motion = await gql('{ videoQuote(input: { model: "svc-v3-motion-control", durationSeconds: 5 }) { credits duration } }', { token: key.secret });
    expect(motion.body.data.videoQuote).toEqual({ credits: 25, duration: '5s' });
  });

  test('videoJobs pages newest first and filters by status', async () => {
    const acct = await gw.newAccount(500);
    const key = await gw.newKey(acct);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await gql(QUEUE, { token: key.secret, variables: { input: { model: TEXT_MODEL, prompt: `clip ${i}`, resolution: '480p' } } });
      ids.push(r.body.data.queueVideo.id);
    }
    const PAGE = 'query($after: String) { videoJobs(first: 2, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }';
    const first = (await gql(PAGE, { token: acct.idToken })).body.data.videoJobs;
    expect(first.edges.map((e: any) => e.node.id)).toEqual([ids[2], ids[1]]);
    expect(first.pageInfo).toEqual({ hasNextPage: true, endCursor: ids[1] });
    const second = (await gql(PAGE, { token: acct.idToken, variables: { after: first.pageInfo.endCursor } })).body.data.videoJobs;
    expect(second.edges.map((e: any) => e.node.id)).toEqual([ids[0]]);
    expect(second.pageInfo.hasNextPage).toBe(false);
    const failed = await gql('{ videoJobs(status: FAILED) { edges { node { id } } } }', { token: key.secret });
    expect(failed.body.data.videoJobs.edges).toEqual([]);
  });

  test('motion control takes the camelCase fields and the IMAGE | VIDEO enum', async () => {
    const acct = await gw.newAccount(100);
    const key = await gw.newKey(acct);
    const res = await gql(
      `mutation { queueMotionControl(input: { imageUrl: "https://example.com/still.png", videoUrl: "https://example.com/move.mp4",
        durationSeconds: 5, keepOriginalSound: true, characterOrientation: VIDEO }) { model status creditsCharged } }`,
      { token: key.secret },
    );
    expect(res.body.data.queueMotionControl).toEqual({ model: 'svc-v3-motion-control', status: 'PROCESSING', creditsCharged: 25 });
    const local = await gql(
      'mutation { queueMotionControl(input: { imageUrl: "http://127.0.0.1/a.png", videoUrl: "https://example.com/m.mp4", durationSeconds: 5 }) { id } }',
      { token: key.secret },
    );
    expect(local.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'imageUrl' });
    expect(local.body.errors[0].message).toMatch(/^imageUrl must not point to a loopback address/);
  });

  test('key management: permissions, webhook, secret rotation, revocation', async () => {
    const acct = await gw.newAccount(10);
    const key = await gw.newKey(acct);
    const t = { token: acct.idToken };
    const perms = await gql(`mutation { updateApiKeyPermissions(id: "${key.id}", allowedModels: ["svc-chat-1"]) { allowedModels blockedModels } }`, t);
    expect(perms.body.data.updateApiKeyPermissions).toEqual({ allowedModels: ['svc-chat-1'], blockedModels: null });
    expect(codes(await gql(QUEUE, { token: key.secret, variables: { input: { model: TEXT_MODEL, prompt: 'x' } } }))).toEqual(['model_forbidden']);
    const cleared = await gql(`mutation { updateApiKeyPermissions(id: "${key.id}", allowedModels: null) { allowedModels } }`, t);
    expect(cleared.body.data.updateApiKeyPermissions.allowedModels).toBeNull();
    const unknown = await gql(`mutation { updateApiKeyPermissions(id: "${key.id}", blockedModels: ["nope"]) { id } }`, t);
    expect(unknown.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'blockedModels[0]' });

    const set = await gql(`mutation { setWebhook(keyId: "${key.id}", url: "https://example.com/hook") { url secret } }`, t);
    expect(set.body.data.setWebhook).toEqual({ url: 'https://example.com/hook', secret: expect.stringMatching(/^whsec_/) });
    const rotated = await gql(`mutation { regenerateWebhookSecret(keyId: "${key.id}") { url secret } }`, t);
    expect(rotated.body.data.regenerateWebhookSecret.secret).not.toBe(set.body.data.setWebhook.secret);
    const keys = await gql('{ apiKeys { id webhook { url } } }', t);
    expect(keys.body.data.apiKeys).toEqual([{ id: key.id, webhook: { url: 'https://example.com/hook' } }]);
    const removed = await gql(`mutation { setWebhook(keyId: "${key.id}", url: null) { url secret } }`, t);
    expect(removed.body.data.setWebhook).toEqual({ url: null, secret: null });
    const refused = await gql(`mutation { setWebhook(keyId: "${key.id}", url: "http://example.com/hook") { url } }`, t);
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'url' });

    const other = await gw.newAccount();
    expect(codes(await gql(`mutation { revokeApiKey(id: "${key.id}") }`, { token: other.idToken }))).toEqual(['not_found_error']);
    expect((await gql(`mutation { revokeApiKey(id: "${key.id}") }`, t)).body.data.revokeApiKey).toBe(true);
    expect((await gql('{ models { id } }', { token: key.secret })).status).toBe(401);
  });
});

describe('GraphQL over GET (what urql sends by default)', () => {
  let key: { id: string; secret: string };
  beforeAll(async () => {
    key = await gw.newKey(await gw.newAccount(10));
  });
  const get = (query: string, headers: Record<string, string>) => fetch(`${gw.url}/graphql?query=${encodeURIComponent(query)}`, { headers });

  test('a query with an Authorization header is answered', async () => {
    const res = await get('{ models { id } }', { authorization: `Bearer ${key.secret}` });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).data.models.length).toBeGreaterThan(5);
  });

  test('a query with no header that forces a preflight is refused as a possible cross-site request', async () => {
    const res = await get('{ models { id } }', {});
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/CSRF|preflight/i);
  });

  test('a mutation over GET is refused, and nothing is queued', async () => {
    const res = await get(`mutation { queueVideo(input: { model: "${TEXT_MODEL}", prompt: "x" }) { id } }`, { authorization: `Bearer ${key.secret}` });
    expect(res.status).toBe(405);
    const jobs = await gw.api('POST', '/graphql', { token: key.secret, body: { query: '{ videoJobs(first: 5) { edges { node { id } } } }' } });
    expect(jobs.body.data.videoJobs.edges).toEqual([]);
  });
});
