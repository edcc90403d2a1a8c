/**
 * Idempotency keys: the `openai` SDK, whose first answer is lost by a proxy after the gateway
 * answered, retries with the same Idempotency-Key and is charged once; the same key with another
 * body is a 409; a 4xx is replayed (not a 402 or a 429); GraphQL queueVideo with one key twice makes one job.
 */
import OpenAI, { toFile } from 'openai';
import { IdempotencyService } from '../../src/domain/idempotency/idempotency-service';
import { makePng } from '../support/fake-openai-upstream';
import { startDroppingProxy, type DroppingProxy } from '../support/dropping-proxy';
import { useTestGateway } from '../support/use-test-gateway';

let proxy: DroppingProxy;
// Registered before the gateway's fixture, so the proxy closes before the gateway it forwards to.
afterAll(async () => {
  await proxy.close();
});
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '30' });
beforeAll(async () => {
  proxy = await startDroppingProxy(gw.url);
});
beforeEach(() => {
  proxy.forwarded.length = 0;
});

const VIDEO = { model: 'svc-2.5-preview-text-to-video', prompt: 'a lighthouse', duration: '5s', resolution: '480p' };

async function liveKey(credits = 100) {
  const acct = await gw.newAccount(credits);
  return { acct, key: await gw.newKey(acct) };
}
const sdk = (secret: string) => new OpenAI({ apiKey: secret, baseURL: `${proxy.url}/v1`, maxRetries: 2 });

test('chat: the first answer is lost, the SDK retries with the same key and gets it replayed; charged once', async () => {
  const { acct, key } = await liveKey();
  proxy.dropNext(1);
  const { data, response } = await sdk(key.secret)
    .chat.completions.create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hello there' }] }, { headers: { 'Idempotency-Key': 'chat-1' } })
    .withResponse();
  expect(data.choices[0].message.content).toEqual(expect.any(String));
  expect(response.headers.get('idempotent-replayed')).toBe('true');
  expect(proxy.forwarded.map((f) => [f.status, f.dropped, f.idempotencyKey])).toEqual([
    [200, true, 'chat-1'],
    [200, false, 'chat-1'],
  ]);
  // Charged once: the balance is the grant minus what the one answer says the call cost.
  const cost = Number(response.headers.get('x-svc-credits'));
  expect(cost).toBeGreaterThan(0);
  expect(await gw.balance(acct)).toBeCloseTo(100 - cost, 6);
});

test('Responses: the first answer is lost, the SDK retries with the same key and gets the same response replayed; charged once; a stream ignores the key', async () => {
  const { acct, key } = await liveKey();
  proxy.dropNext(1);
  const { data, response } = await sdk(key.secret)
    .responses.create({ model: 'svc-chat-1', input: 'hello there' }, { headers: { 'Idempotency-Key': 'resp-1' } })
    .withResponse();
  expect(data.output_text).toEqual(expect.any(String));
  expect(response.headers.get('idempotent-replayed')).toBe('true');
  expect(proxy.forwarded.map((f) => [f.status, f.dropped, f.idempotencyKey])).toEqual([
    [200, true, 'resp-1'],
    [200, false, 'resp-1'],
  ]);
  const cost = Number(response.headers.get('x-svc-credits'));
  expect(cost).toBeGreaterThan(0);
  expect(await gw.balance(acct)).toBeCloseTo(100 - cost, 6);
  // The stored response is the one replayed.
  expect((await gw.api('GET', `/v1/responses/${data.id}`, { token: key.secret })).body.id).toBe(data.id);
  // Another body under the same key is refused, as on chat.
  const other = await gw.api('POST', '/v1/responses', {
    token: key.secret,
    body: { model: 'svc-chat-1', input: 'something else' },
    headers: { 'Idempotency-Key': 'resp-1' },
  });
  expect(other.status).toBe(409);
  // A stream cannot be replayed: it runs, and is charged, each time.
  let before = await gw.balance(acct);
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json', 'Idempotency-Key': 'resp-stream' },
      body: JSON.stringify({ model: 'svc-chat-1', input: 'hello there', stream: true }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('idempotent-replayed')).toBeNull();
    expect(await res.text()).toContain('response.completed');
    // A stream's charge is recorded before its last event leaves.
    const after = await gw.balance(acct);
    expect(after).toBeLessThan(before);
    before = after;
  }
});

test('images: generation and a multipart edit, each answer lost once, are each charged once', async () => {
  const { acct, key } = await liveKey();
  const openai = sdk(key.secret);
  proxy.dropNext(1);
  const gen = await openai.images
    .generate({ model: 'svc-creative-v8', prompt: 'a red fox', size: '64x64' }, { headers: { 'Idempotency-Key': 'img-1' } })
    .withResponse();
  expect(gen.response.headers.get('idempotent-replayed')).toBe('true');
  proxy.dropNext(1);
  const edit = await openai.images
    .edit(
      { model: 'svc-image-edit-1', prompt: 'add a hat', image: await toFile(makePng(64, 64), 'in.png', { type: 'image/png' }) },
      { headers: { 'Idempotency-Key': 'edit-1' } },
    )
    .withResponse();
  expect(edit.response.headers.get('idempotent-replayed')).toBe('true');
  expect(edit.data.data).toHaveLength(1);
  expect(proxy.forwarded.filter((f) => f.dropped)).toHaveLength(2);
  expect(proxy.forwarded).toHaveLength(4);
  const spent = Number(gen.response.headers.get('x-svc-credits')) + Number(edit.response.headers.get('x-svc-credits'));
  // Each charged once: the balance is the grant minus what the two answers say the calls cost.
  expect(await gw.balance(acct)).toBeCloseTo(100 - spent, 6);
});

test('video queue: the same key and body answer the same job once charged; another body is a 409', async () => {
  const { acct, key } = await liveKey();
  const post = (body: object, idem: string) => gw.api('POST', '/v1/video/queue', { token: key.secret, body, headers: { 'Idempotency-Key': idem } });
  const first = await post(VIDEO, 'v-1');
  const again = await post({ ...VIDEO }, 'v-1');
  expect(first.status).toBe(200);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(again.status).toBe(200);
  expect(again.body).toEqual(first.body);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
  expect(again.headers.get('x-ratelimit-limit-requests')).toBe(first.headers.get('x-ratelimit-limit-requests'));
  expect(await gw.balance(acct)).toBe(90);

  const other = await post({ ...VIDEO, prompt: 'something else' }, 'v-1');
  expect(other.status).toBe(409);
  expect(other.body.error).toMatchObject({ type: 'idempotency_error', param: 'Idempotency-Key' });
  expect(await gw.balance(acct)).toBe(90);
  // The key is scoped to the API key: another key of the account may use the same value.
  const second = await gw.newKey(acct);
  const elsewhere = await gw.api('POST', '/v1/video/queue', { token: second.secret, body: VIDEO, headers: { 'Idempotency-Key': 'v-1' } });
  expect(elsewhere.status).toBe(200);
  expect(elsewhere.body.id).not.toBe(first.body.id);
});

test('a 4xx first answer is replayed; a bad key is a 400 naming the header; a key still running is a 409 with Retry-After', async () => {
  const { key } = await liveKey(5);
  const post = (idem: string, body: object = VIDEO) => gw.api('POST', '/v1/video/queue', { token: key.secret, body, headers: { 'Idempotency-Key': idem } });
  const wrong = await post('wrong-1', { ...VIDEO, resolution: '4k' });
  expect(wrong.status).toBe(400);
  const wrongAgain = await post('wrong-1', { ...VIDEO, resolution: '4k' });
  expect(wrongAgain.body).toEqual(wrong.body);
  expect(wrongAgain.headers.get('idempotent-replayed')).toBe('true');

  const bad = await post('x'.repeat(256));
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param: 'Idempotency-Key' });

  // A first request in flight (its row claimed, no response yet), as another instance would hold it.
  const fp = IdempotencyService.fingerprint('POST', '/video/queue', VIDEO);
  await gw.gateway.database.db.run(
    `insert into idempotency_keys (api_key_id, idempotency_key, fingerprint, expires_at) values (?, 'busy-1', ?, now() + interval '1 day')`,
    [key.id, fp],
  );
  const busy = await post('busy-1');
  expect(busy.status).toBe(409);
  expect(busy.headers.get('retry-after')).toBe('1');
  expect(busy.body.error).toMatchObject({ type: 'idempotency_error', param: 'Idempotency-Key' });
});

test('a 429 (the daily cap, a rate limit) is not replayed: once the key may spend again, the retry runs; REST and GraphQL', async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct, { dailySpendCap: 5 });
  const post = () => gw.api('POST', '/v1/video/queue', { token: key.secret, body: VIDEO, headers: { 'Idempotency-Key': 'capped-1' } });
  const QUEUE = `mutation($input: QueueVideoInput!, $k: String) { queueVideo(input: $input, idempotencyKey: $k) { id } }`;
  const gql = () => gw.api('POST', '/graphql', { token: key.secret, body: { query: QUEUE, variables: { input: VIDEO, k: 'capped-2' } } });
  const capped = await post();
  expect(capped.status).toBe(429);
  expect(capped.body.error.type).toBe('daily_cap_exceeded');
  expect((await gql()).body.errors[0].extensions.code).toBe('daily_cap_exceeded');
  // A retry while the cap still binds is told the same, afresh (not replayed).
  const again = await post();
  expect(again.status).toBe(429);
  expect(again.headers.get('idempotent-replayed')).toBeNull();

  const raised = await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { dailySpendCap: 50 } });
  expect(raised.status).toBe(200);
  const ran = await post();
  expect(ran.status).toBe(200);
  expect(ran.headers.get('idempotent-replayed')).toBeNull();
  const viaGraphql = await gql();
  expect(viaGraphql.body.errors).toBeUndefined();
  expect(await gw.balance(acct)).toBe(80);
  // And now the answers are the stored ones.
  expect((await post()).headers.get('idempotent-replayed')).toBe('true');
  expect((await gql()).body.data.queueVideo.id).toBe(viaGraphql.body.data.queueVideo.id);
  expect(await gw.balance(acct)).toBe(80);
});

/**
 * A 402 says "not now" as a 429 does: nothing was charged, and the retry after a top-up must run,
 * not be replayed for 24 hours. REST images (the probe's case) and GraphQL queueVideo.
 */
test('a 402 is not replayed: after a top-up the retry with the same key runs and is charged once; REST and GraphQL', async () => {
  const { acct, key } = await liveKey(0);
  const IMAGE = { model: 'svc-creative-v8', prompt: 'a red fox', size: '64x64' };
  const post = () => gw.api('POST', '/v1/images/generations', { token: key.secret, body: IMAGE, headers: { 'Idempotency-Key': 'k4' } });
  const QUEUE = `mutation($input: QueueVideoInput!, $k: String) { queueVideo(input: $input, idempotencyKey: $k) { id } }`;
  const gql = () => gw.api('POST', '/graphql', { token: key.secret, body: { query: QUEUE, variables: { input: VIDEO, k: 'k4-gql' } } });
  const poor = await post();
  expect(poor.status).toBe(402);
  expect(poor.body.error).toMatchObject({ type: 'insufficient_credits' });
  expect((await gql()).body.errors[0].extensions.code).toBe('insufficient_credits');
  // Still poor: told afresh, not replayed.
  const stillPoor = await post();
  expect(stillPoor.status).toBe(402);
  expect(stillPoor.headers.get('idempotent-replayed')).toBeNull();
  expect(await gw.balance(acct)).toBe(0);

  await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: 'test-admin-token-0123456789', body: { credits: 100, reason: 'top-up' } });
  const ran = await post();
  expect(ran.status).toBe(200);
  expect(ran.headers.get('idempotent-replayed')).toBeNull();
  const cost = Number(ran.headers.get('x-svc-credits'));
  expect(cost).toBeGreaterThan(0);
  const viaGraphql = await gql();
  expect(viaGraphql.body.errors).toBeUndefined();
  expect(await gw.balance(acct)).toBeCloseTo(100 - cost - 10, 6);
  // From now on the stored answers are replayed and nothing more is charged.
  const replayed = await post();
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(replayed.body).toEqual(ran.body);
  expect((await gql()).body.data.queueVideo.id).toBe(viaGraphql.body.data.queueVideo.id);
  expect(await gw.balance(acct)).toBeCloseTo(100 - cost - 10, 6);
});

test('GraphQL queueVideo twice with one idempotencyKey gives one job and one charge', async () => {
  const { acct, key } = await liveKey();
  const QUEUE = `mutation($input: QueueVideoInput!, $k: String) { queueVideo(input: $input, idempotencyKey: $k) { id status creditsCharged } }`;
  const input = { model: VIDEO.model, prompt: VIDEO.prompt, duration: VIDEO.duration, resolution: VIDEO.resolution };
  const run = () => gw.api('POST', '/graphql', { token: key.secret, body: { query: QUEUE, variables: { input, k: 'gql-1' } } });
  const a = await run();
  const b = await run();
  expect(a.body.errors).toBeUndefined();
  expect(b.body.data.queueVideo).toEqual(a.body.data.queueVideo);
  const jobs = await gw.gateway.database.db.all(`select id from video_jobs where api_key_id = ?`, [key.id]);
  expect(jobs).toHaveLength(1);
  expect(await gw.balance(acct)).toBe(90);
  const other = await gw.api('POST', '/graphql', {
    token: key.secret,
    body: { query: QUEUE, variables: { input: { ...input, prompt: 'other' }, k: 'gql-1' } },
  });
  expect(other.body.errors[0].extensions).toMatchObject({ code: 'idempotency_error', param: 'Idempotency-Key' });
});

/**
 * The first request was answered and charged by an instance that died before its response was
 * stored (here: its claim set back to "running, held by an instance that stopped heartbeating").
 * The retry takes the claim over and runs the call again, as the same call: the chat answer has
 * the first one's id and is not charged again, the image request is not charged again, the video
 * queue answers the job the first request made; each says what the call was charged.
 */
test("a retry that takes over a dead instance's claim is not charged again: chat, Responses, images, video, GraphQL", async () => {
  const { acct, key } = await liveKey();
  const db = gw.gateway.database.db;
  const diedBeforeStoring = (idem: string) =>
    db.run(
      `update idempotency_keys set status_code = null, response_headers = null, response_body = null, holder = 'inst_dead', heartbeat_at = now() - interval '1 hour'
        where api_key_id = ? and idempotency_key = ?`,
      [key.id, idem],
    );
  const post = (path: string, body: object, idem: string) => gw.api('POST', path, { token: key.secret, body, headers: { 'Idempotency-Key': idem } });
  const calls: Array<[string, object]> = [
    ['/v1/chat/completions', { model: 'svc-chat-1', messages: [{ role: 'user', content: 'once, whatever happens' }] }],
    ['/v1/responses', { model: 'svc-chat-1', input: 'once, whatever happens' }],
    ['/v1/images/generations', { model: 'svc-creative-v8', prompt: 'a red fox', size: '64x64' }],
    ['/v1/video/queue', VIDEO],
  ];
  for (const [path, body] of calls) {
    const idem = `takeover${path}`;
    const first = await post(path, body, idem);
    expect(first.status).toBe(200);
    const balance = await gw.balance(acct);
    await diedBeforeStoring(idem);

    const retry = await post(path, body, idem);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull(); // run again, not replayed
    // A chat call keeps its id (made from the claim's call id); a response and an image request get new ones, the charge is the same call's.
    if (path === '/v1/chat/completions' || path === '/v1/video/queue') expect(retry.body.id).toBe(first.body.id);
    if (path !== '/v1/video/queue') expect(retry.headers.get('x-svc-credits')).toBe(first.headers.get('x-svc-credits'));
    expect(await gw.balance(acct)).toBe(balance);
    // Its answer is now the stored one.
    const replay = await post(path, body, idem);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
  }
  expect(await db.all(`select id from video_jobs where api_key_id = ?`, [key.id])).toHaveLength(1);

  const QUEUE = `mutation($input: QueueVideoInput!, $k: String) { queueVideo(input: $input, idempotencyKey: $k) { id creditsCharged } }`;
  const gql = () => gw.api('POST', '/graphql', { token: key.secret, body: { query: QUEUE, variables: { input: VIDEO, k: 'gql-takeover' } } });
  const first = await gql();
  expect(first.body.errors).toBeUndefined();
  const balance = await gw.balance(acct);
  await diedBeforeStoring('gql-takeover');
  const retry = await gql();
  expect(retry.body.data.queueVideo).toEqual(first.body.data.queueVideo);
  expect(await gw.balance(acct)).toBe(balance);
  expect(await db.all(`select id from video_jobs where api_key_id = ?`, [key.id])).toHaveLength(2);
});
