/**
 * Keys that expire and rotate, through both doors, on a gateway whose clock the test steps: an
 * expired key answers 401 `api_key_expired` (the Express routes, the JSON lane and GraphQL), a
 * cleared expiry brings it back; a rotated key answers its new secret once and takes the replaced
 * one until the grace ends; the fields are named in each door's refusals; and a GraphQL
 * WebSocket is closed (4403) when its key expires or its replaced secret's grace ends.
 */
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { fakeClock } from '../support/fake-clock';
import { useFixture } from '../support/fixture';
import { startTestGateway, type TestAccount } from '../support/gateway-harness';
import { expectLedgerInvariants } from '../support/ledger-invariants';

const clock = fakeClock();
const gw = useFixture(
  'a test gateway on a fake clock',
  () => startTestGateway({ WORKER_CONCURRENCY: '0' }, { clock }),
  async (g) => {
    try {
      await expectLedgerInvariants(g.gateway.database.db);
    } finally {
      await g.close();
    }
  },
);

const inSeconds = (s: number) => new Date(clock.now() + s * 1000).toISOString();
const models = (secret: string) => gw.api('GET', '/v1/models', { token: secret });
/** A chat call on the JSON lane (plain JSON, no query string): refused before anything is charged. */
const chat = (secret: string) =>
  gw.api('POST', '/v1/chat/completions', { token: secret, body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 } });
const gql = (token: string, query: string, variables?: Record<string, unknown>) => gw.api('POST', '/graphql', { token, body: { query, variables } });
const KEY_FIELDS = 'id expiresAt rotatedAt previousSecretUntil created';

describe('REST', () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await gw.newAccount(10);
  });
  const asOwner = (method: string, path: string, body?: unknown) => gw.api(method, path, { token: acct.idToken, body });

  test('a key answers until its expiresAt and 401 api_key_expired from then, on every route; PATCH null clears it', async () => {
    const expiresAt = inSeconds(30);
    const created = await asOwner('POST', '/account/api-keys', { name: 'ci', expiresAt });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ expiresAt: new Date(expiresAt).toISOString(), rotatedAt: null });
    const secret: string = created.body.key;
    expect((await models(secret)).status).toBe(200);
    clock.stepWall(29_000);
    expect((await models(secret)).status).toBe(200);
    clock.stepWall(1_000);
    for (const refused of [await models(secret), await chat(secret)]) {
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ type: 'authentication_error', code: 'api_key_expired' });
    }
    // Still listed, with its expiry, and brought back by clearing it.
    const listed = await asOwner('GET', '/account/api-keys');
    expect(listed.body.data.find((k: { id: string }) => k.id === created.body.id).expiresAt).toBe(new Date(expiresAt).toISOString());
    const cleared = await asOwner('PATCH', `/account/api-keys/${created.body.id}`, { expiresAt: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.expiresAt).toBeNull();
    expect((await models(secret)).status).toBe(200);
  });

  test('an expiresAt in the past or not RFC 3339 is a 400 naming it, on create and on PATCH', async () => {
    const key = await gw.newKey(acct);
    for (const expiresAt of [inSeconds(-1), 'next week', '2099-01-01', 4102444800]) {
      for (const refused of [
        await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: { expiresAt }, unchecked: true }),
        await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { expiresAt }, unchecked: true }),
      ]) {
        expect(refused.status).toBe(400);
        expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', param: 'expiresAt', message: expect.stringContaining("'expiresAt'") });
      }
    }
  });

  test('rotate answers the record with a new secret; the replaced one answers until the grace ends, then 401 invalid_api_key', async () => {
    const key = await gw.newKey(acct);
    expect((await models(key.secret)).status).toBe(200);
    const rotated = await asOwner('POST', `/account/api-keys/${key.id}/rotate`, { graceSeconds: 60 });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({
      id: key.id,
      object: 'api_key',
      rotatedAt: new Date(clock.now()).toISOString(),
      previousSecretUntil: new Date(clock.now() + 60_000).toISOString(),
      expiresAt: null,
    });
    expect(rotated.body.key).toMatch(new RegExp(`^${key.id}_[A-Za-z0-9]+$`));
    expect(rotated.body.key).not.toBe(key.secret);
    for (const secret of [key.secret, rotated.body.key]) expect((await models(secret)).status).toBe(200);
    clock.stepWall(59_999);
    expect((await models(key.secret)).status).toBe(200);
    clock.stepWall(1);
    const refused = await chat(key.secret);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
    expect((await models(key.secret)).status).toBe(401);
    expect((await models(rotated.body.key)).status).toBe(200);
    const listed = await asOwner('GET', '/account/api-keys');
    expect(listed.body.data.find((k: { id: string }) => k.id === key.id)).toMatchObject({ rotatedAt: rotated.body.rotatedAt });
    expect(JSON.stringify(listed.body)).not.toContain(rotated.body.key);
  });

  test('with no body the grace is a day; graceSeconds out of range is a 400 naming it; another account cannot rotate the key (404)', async () => {
    const key = await gw.newKey(acct);
    const rotated = await asOwner('POST', `/account/api-keys/${key.id}/rotate`);
    expect(rotated.status).toBe(200);
    clock.stepWall(86_399_000);
    expect((await models(key.secret)).status).toBe(200);
    clock.stepWall(1_000);
    expect((await models(key.secret)).status).toBe(401);
    for (const graceSeconds of [-1, 604_801, 2.5, '60']) {
      const refused = await gw.api('POST', `/account/api-keys/${key.id}/rotate`, { token: acct.idToken, body: { graceSeconds }, unchecked: true });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', param: 'graceSeconds' });
    }
    const other = await gw.newAccount();
    const foreign = await gw.api('POST', `/account/api-keys/${key.id}/rotate`, { token: other.idToken, body: { graceSeconds: 0 } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toMatchObject({ type: 'not_found_error', code: 'key_not_found' });
    expect((await models(rotated.body.key)).status).toBe(200);
  });
});

describe('GraphQL', () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await gw.newAccount(10);
  });

  test('createApiKey and updateApiKey take expiresAt; an expired key is authentication_error with reason api_key_expired', async () => {
    const expiresAt = inSeconds(20);
    const made = await gql(acct.idToken, `mutation($at: DateTime) { createApiKey(input: { expiresAt: $at }) { ${KEY_FIELDS} key } }`, { at: expiresAt });
    const key = made.body.data.createApiKey;
    expect(key).toMatchObject({ expiresAt: new Date(expiresAt).toISOString(), rotatedAt: null });
    expect((await gql(key.key, '{ models { id } }')).status).toBe(200);
    clock.stepWall(20_000);
    const refused = await gql(key.key, '{ models { id } }');
    expect(refused.status).toBe(401);
    expect(refused.body.errors[0].extensions).toMatchObject({ code: 'authentication_error', reason: 'api_key_expired' });
    const cleared = await gql(acct.idToken, `mutation { updateApiKey(id: "${key.id}", input: { expiresAt: null }) { ${KEY_FIELDS} } }`);
    expect(cleared.body.data.updateApiKey.expiresAt).toBeNull();
    expect((await gql(key.key, '{ models { id } }')).status).toBe(200);
  });

  test('refusals name expiresAt, graceSeconds and id as GraphQL writes them', async () => {
    const key = await gw.newKey(acct);
    const past = await gql(acct.idToken, `mutation($at: DateTime) { updateApiKey(id: "${key.id}", input: { expiresAt: $at }) { id } }`, { at: inSeconds(-60) });
    expect(past.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'expiresAt' });
    const pastOnCreate = await gql(acct.idToken, `mutation($at: DateTime) { createApiKey(input: { expiresAt: $at }) { id } }`, { at: inSeconds(-60) });
    expect(pastOnCreate.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'expiresAt' });
    const notADate = await gql(acct.idToken, `mutation { updateApiKey(id: "${key.id}", input: { expiresAt: "soon" }) { id } }`);
    expect(notADate.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const grace = await gql(acct.idToken, `mutation { rotateApiKey(id: "${key.id}", graceSeconds: 604801) { id } }`);
    expect(grace.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'graceSeconds' });
    const other = await gw.newAccount();
    const foreign = await gql(other.idToken, `mutation { rotateApiKey(id: "${key.id}") { id } }`);
    expect(foreign.body.errors[0].extensions).toMatchObject({ code: 'not_found_error', param: 'id', reason: 'key_not_found' });
    expect((await models(key.secret)).status).toBe(200);
  });

  test('rotateApiKey answers the key with its new secret; graceSeconds 0 stops the replaced one at once', async () => {
    const key = await gw.newKey(acct);
    expect((await models(key.secret)).status).toBe(200);
    const rotated = await gql(acct.idToken, `mutation { rotateApiKey(id: "${key.id}", graceSeconds: 0) { ${KEY_FIELDS} key } }`);
    const answer = rotated.body.data.rotateApiKey;
    expect(answer).toMatchObject({ id: key.id, rotatedAt: new Date(clock.now()).toISOString(), previousSecretUntil: null, expiresAt: null });
    expect((await models(key.secret)).status).toBe(401);
    expect((await gql(answer.key, '{ models { id } }')).status).toBe(200);
    const listed = await gql(acct.idToken, `{ apiKeys { ${KEY_FIELDS} } }`);
    expect(listed.body.data.apiKeys.find((k: { id: string }) => k.id === key.id).rotatedAt).toBe(answer.rotatedAt);
  });
});

describe('GraphQL WebSockets', () => {
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
  });

  /** A socket opened with `secret`, subscribed, and a promise of its close code and reason. */
  async function connected(secret: string) {
    let closedWith!: (e: { code: number; reason: string }) => void;
    const closed = new Promise<{ code: number; reason: string }>((r) => (closedWith = r));
    const client = createClient({
      url: `${gw.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${secret}` },
      on: { closed: (e) => closedWith(e as { code: number; reason: string }) },
    });
    clients.push(client);
    client.subscribe({ query: 'subscription { videoJobsUpdated { id } }' }, { next: () => undefined, error: () => undefined, complete: () => undefined });
    // A round trip on the same socket: the connection is accepted and the subscription started.
    await new Promise<void>((resolve, reject) =>
      client.subscribe({ query: '{ models { id } }' }, { next: () => undefined, error: reject, complete: () => resolve() }),
    );
    return { client, closed };
  }
  /** Resolves once a one-off timer of `ms` is armed on the gateway's clock. */
  const armed = (ms: number) => clock.whenArmed((t) => !t.repeats && t.delayMs === ms);

  test('a socket opened with a key is closed with 4403 when the key expires', async () => {
    const acct = await gw.newAccount(1);
    const key = await gw.newKey(acct, { expiresAt: inSeconds(9.123) });
    const { closed } = await connected(key.secret);
    await armed(9_123);
    await clock.tickAsync(9_123);
    expect(await closed).toMatchObject({ code: 4403, reason: expect.stringMatching(/expired/) });
  });

  test('a socket opened with a replaced secret is closed with 4403 when its grace ends; one opened with the new secret stays', async () => {
    const acct = await gw.newAccount(1);
    const key = await gw.newKey(acct);
    const old = await connected(key.secret);
    const rotated = await gw.api('POST', `/account/api-keys/${key.id}/rotate`, { token: acct.idToken, body: { graceSeconds: 7 } });
    const current = await connected(rotated.body.key);
    // The key's change was heard and its sockets checked again: the old one is due to be checked at the grace's end.
    await armed(7_000);
    await clock.tickAsync(7_000);
    expect(await old.closed).toMatchObject({ code: 4403, reason: expect.stringMatching(/Invalid API key/) });
    await new Promise<void>((resolve, reject) =>
      current.client.subscribe({ query: '{ models { id } }' }, { next: () => undefined, error: reject, complete: () => resolve() }),
    );
  });
});
