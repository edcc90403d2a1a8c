import { pollUntil } from '../support/poll';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { SignJWT, generateKeyPair } from 'jose';
import { ADMIN_TOKEN } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { DEV_AUDIENCE, DEV_ISSUER } from '../../src/infra/identity/dev-identity-provider';

const gw = useTestGateway();

const expectError = (res: { status: number; body: any }, status: number, type: string) => {
  expect(res.status).toBe(status);
  expect(res.body.error).toMatchObject({ type });
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error).toHaveProperty('code');
  expect(res.body.error).toHaveProperty('param');
};

describe('operations', () => {
  test('healthz answers 200 and metrics serve Prometheus text', async () => {
    expect((await gw.api('GET', '/healthz')).status).toBe(200);
    const m = await gw.api('GET', '/metrics');
    expect(m.status).toBe(200);
    expect(m.headers.get('content-type')).toContain('text/plain');
    expect(m.body).toContain('svc_http_requests_total');
    expect(m.body).toContain('process_cpu_seconds_total');
    // Unauthenticated: nothing that names the runtime's version.
    expect(m.body).not.toContain('nodejs_version_info');
    expect(m.body).not.toContain(process.version);
  });

  test('metrics labels are route templates: a flood of random paths adds no series; a real 404 is labelled by its route', async () => {
    const series = async () => ((await gw.api('GET', '/metrics')).body as string).split('\n').filter((l) => l.startsWith('svc_http_requests_total{'));
    // Warm every label the flood (and reading /metrics) can produce, then count.
    await series();
    await gw.api('GET', `/warm-${Date.now()}`, { unchecked: true });
    await gw.api('GET', '/v1/warm', { token: 'svc_live_nope', unchecked: true });
    await gw.api('POST', '/v1/warm', { token: 'svc_live_nope', unchecked: true });
    const before = await series();
    const junks: string[] = [];
    for (let i = 0; i < 100; i++) {
      const junk = Math.random().toString(36).slice(2);
      junks.push(junk);
      await gw.api('GET', `/${junk}`, { unchecked: true });
      await gw.api('GET', `/v1/${junk}/${junk}`, { token: 'svc_live_nope', unchecked: true });
      await gw.api('POST', `/v1/${junk}`, { unchecked: true });
    }
    const after = await series();
    expect(after.map((l) => l.replace(/\s\S+$/, ''))).toEqual(before.map((l) => l.replace(/\s\S+$/, '')));
    const text = (await gw.api('GET', '/metrics')).body as string;
    expect(junks.filter((j) => text.includes(j))).toEqual([]);
    // A 404 a route answers (an unknown response id) is labelled by that route.
    const acct = await gw.newAccount(0);
    const key = await gw.newKey(acct);
    expect((await gw.api('GET', '/v1/responses/resp_missing', { token: key.secret })).status).toBe(404);
    expect((await gw.api('GET', '/metrics')).body as string).toContain('svc_http_requests_total{route="/v1/responses/:id",status="404"}');
  });

  test('answers for a credential are not stored by any cache: secrets, the account, /v1 (both lanes), /admin, refusals too', async () => {
    const acct = await gw.newAccount(1);
    const created = await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: { name: 'cache' } });
    expect(created.status).toBe(201);
    const answers = [
      created,
      await gw.api('GET', '/account', { token: acct.idToken }),
      await gw.api('GET', '/v1/models', { token: created.body.key }),
      await gw.api('POST', '/v1/chat/completions', { token: created.body.key, body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] } }),
      await gw.api('POST', '/v1/chat/completions', { token: created.body.key, body: { model: 'nope', messages: [] } }),
      await gw.api('GET', '/account', { token: 'nope' }),
      await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 1, reason: 'cache' } }),
    ];
    expect(answers.map((res) => [res.status, res.headers.get('cache-control')])).toEqual(answers.map((res) => [res.status, 'no-store']));
  });

  test('unknown route is a 404 in the OpenAI error shape', async () => {
    expectError(await gw.api('GET', '/nope', { unchecked: true }), 404, 'not_found_error');
  });
});

describe('accounts from ID tokens', () => {
  test('first sight creates the account with a zero balance', async () => {
    const token = await gw.gateway.devIdentity!.issue('fresh-user-1');
    const res = await gw.api('GET', '/account', { token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^acct_/),
      balance: 0,
      member: false,
      created: expect.any(Number),
      lowBalanceAlert: null,
      webhook: null,
    });
    const again = await gw.api('GET', '/account', { token });
    expect(again.body.id).toBe(res.body.id);
  });

  test.each([
    ['missing', undefined],
    ['malformed', 'not-a-jwt'],
    ['SQL in the header', "' OR 1=1; DROP TABLE accounts; --"],
  ])('%s token answers 401', async (_name, token) => {
    expectError(await gw.api('GET', '/account', { token }), 401, 'authentication_error');
  });

  test('a token of another type (typ other than JWT) answers 401, though the issuer signed it', async () => {
    const idp = gw.gateway.devIdentity!;
    for (const typ of ['at+jwt', 'logout+jwt', 'dpop+jwt']) {
      expectError(await gw.api('GET', '/account', { token: await idp.issue('u-typ', { typ }) }), 401, 'authentication_error');
    }
    for (const typ of ['JWT', 'jwt', 'application/jwt']) {
      expect((await gw.api('GET', '/account', { token: await idp.issue('u-typ', { typ }) })).status).toBe(200);
    }
  });

  test('expired, wrong-audience and wrong-signature tokens answer 401', async () => {
    const idp = gw.gateway.devIdentity!;
    const expired = await idp.issue('u-expired', { expiresIn: Math.floor(Date.now() / 1000) - 3600 });
    const wrongAudience = await idp.issue('u-aud', { audience: 'someone-else' });
    const { privateKey } = await generateKeyPair('ES256');
    const wrongSignature = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(DEV_ISSUER)
      .setAudience(DEV_AUDIENCE)
      .setSubject('u-forged')
      .setExpirationTime('1h')
      .sign(privateKey);
    const hs256 = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(DEV_ISSUER)
      .setAudience(DEV_AUDIENCE)
      .setSubject('u-hs')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('a-shared-secret-of-enough-length!!'));
    for (const token of [expired, wrongAudience, wrongSignature, hs256]) {
      const res = await gw.api('GET', '/account', { token });
      expectError(res, 401, 'authentication_error');
      expect(res.body.error.code).toBe('invalid_api_key');
    }
  });

  test('an API key is not an ID token', async () => {
    const acct = await gw.newAccount();
    const key = await gw.newKey(acct);
    expectError(await gw.api('GET', '/account', { token: key.secret }), 401, 'authentication_error');
  });
});

describe('API keys', () => {
  test('create shows the secret once; list never does', async () => {
    const acct = await gw.newAccount();
    const res = await gw.api('POST', '/account/api-keys', {
      token: acct.idToken,
      body: { name: 'ci', mode: 'test', allowedModels: ['svc-chat-1'], dailySpendCap: 5 },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      id: expect.stringMatching(/^svc_test_[A-Za-z0-9]+$/),
      object: 'api_key',
      name: 'ci',
      mode: 'test',
      allowedModels: ['svc-chat-1'],
      blockedModels: null,
      dailySpendCap: 5,
      webhook: null,
      lastUsed: null,
      key: expect.stringMatching(/^svc_test_[A-Za-z0-9_]+$/),
    });
    const list = await gw.api('GET', '/account/api-keys', { token: acct.idToken });
    expect(list.body.object).toBe('list');
    expect(list.body.data).toHaveLength(1);
    expect(JSON.stringify(list.body)).not.toContain(res.body.key);
    expect(list.body.data[0]).not.toHaveProperty('key');
    // the stored form is a hash, never the secret
    const stored = await gw.gateway.database.db.all(`select * from api_keys where id = ?`, [res.body.id]);
    expect(JSON.stringify(stored)).not.toContain(res.body.key);
  });

  test('an 11th active key answers 409 key_limit_reached; revoking one makes room', async () => {
    const acct = await gw.newAccount();
    const keys = await Promise.all(Array.from({ length: 10 }, () => gw.newKey(acct)));
    expectError(await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: {} }), 409, 'key_limit_reached');
    const del = await gw.api('DELETE', `/account/api-keys/${keys[0].id}`, { token: acct.idToken });
    expect(del.body).toEqual({ id: keys[0].id, deleted: true });
    expect((await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: {} })).status).toBe(201);
  });

  test('concurrent creates never pass 10 active keys', async () => {
    const acct = await gw.newAccount();
    const results = await Promise.all(Array.from({ length: 15 }, () => gw.api('POST', '/account/api-keys', { token: acct.idToken, body: {} })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(10);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
  });

  test('PATCH updates permissions and name; null and [] clear a list', async () => {
    const acct = await gw.newAccount();
    const key = await gw.newKey(acct, { blockedModels: ['flux-pro'] });
    const res = await gw.api('PATCH', `/account/api-keys/${key.id}`, {
      token: acct.idToken,
      body: { name: 'renamed', allowedModels: ['svc-chat-1', 'svc-creative-v8'], blockedModels: null, dailySpendCap: 12.5 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'renamed', allowedModels: ['svc-chat-1', 'svc-creative-v8'], blockedModels: null, dailySpendCap: 12.5 });
    const cleared = await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { allowedModels: [] } });
    expect(cleared.body.allowedModels).toBeNull();
  });

  test('validation names the field', async () => {
    const acct = await gw.newAccount();
    const bad = await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: { mode: 'staging' } });
    expectError(bad, 400, 'invalid_request_error');
    expect(bad.body.error.param).toBe('mode');
    const unknownModel = await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: { allowedModels: ['svc-chat-1', 'nope'] } });
    expect(unknownModel.body.error.param).toBe('allowedModels[1]');
    const cap = await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: { dailySpendCap: -1 } });
    expect(cap.body.error.param).toBe('dailySpendCap');
  });

  test('a key name (created or renamed) and a grant reason are one line of printable text: control characters, line breaks, direction controls and nothing visible are a 400 naming the field', async () => {
    const acct = await gw.newAccount();
    const key = await gw.newKey(acct, { name: 'café — ünïcode ok' });
    // Right-to-left text and emoji with zero-width joiners are names like any other.
    expect((await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: { name: 'مفتاح الإنتاج 👩\u200d💻' } })).status).toBe(201);
    for (const name of [
      'a\u0001b',
      'line\nbreak',
      'tab\there',
      'c1\u0085',
      'sep\u2028x',
      'bell\u0007',
      'invoice\u202egpj.exe',
      'isolate\u2067x',
      'mark\u200fx',
      '\u200b\u200b',
      '\u3164',
      '\ufeff \u200d',
    ]) {
      const created = await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: { name } });
      expect([name, created.status, created.body.error?.param]).toEqual([name, 400, 'name']);
      expect(created.body.error.message).toMatch(/one line of printable text/);
      const renamed = await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { name } });
      expect([name, renamed.status, renamed.body.error?.param]).toEqual([name, 400, 'name']);
      const granted = await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 1, reason: name } });
      expect([name, granted.status, granted.body.error?.param]).toEqual([name, 400, 'reason']);
    }
    const list = await gw.api('GET', '/account/api-keys', { token: acct.idToken });
    expect(list.body.data.map((k: { name: string }) => k.name)).toEqual(['مفتاح الإنتاج 👩\u200d💻', 'café — ünïcode ok']);
    expect(await gw.balance(acct)).toBe(0);
  });

  test("another account's key id answers 404 for every operation", async () => {
    const owner = await gw.newAccount();
    const other = await gw.newAccount();
    const key = await gw.newKey(owner);
    for (const [method, path, body] of [
      ['PATCH', `/account/api-keys/${key.id}`, { name: 'x' }],
      ['DELETE', `/account/api-keys/${key.id}`, undefined],
      ['PATCH', `/account/api-keys/${key.id}/webhook`, { url: null }],
    ] as const) {
      expectError(await gw.api(method, path, { token: other.idToken, body }), 404, 'not_found_error');
    }
    // and the key still works for its owner
    expect((await gw.api('GET', '/v1/models', { token: key.secret })).status).toBe(200);
  });

  test('bearer keys: unknown, malformed, SQL-carrying and revoked keys answer 401; revocation is immediate', async () => {
    const acct = await gw.newAccount();
    const key = await gw.newKey(acct);
    expect((await gw.api('GET', '/v1/models', { token: key.secret })).status).toBe(200);
    const forged = key.secret.slice(0, -4) + 'AAAA';
    for (const token of [undefined, 'svc_live_nope', forged, "svc_live_x' OR '1'='1", key.id]) {
      expectError(await gw.api('GET', '/v1/models', { token }), 401, 'authentication_error');
    }
    const raw = await fetch(`${gw.url}/v1/models`, { headers: { authorization: "Bearer ' UNION SELECT secret_hash FROM api_keys --" } });
    expect(raw.status).toBe(401);
    await gw.api('DELETE', `/account/api-keys/${key.id}`, { token: acct.idToken });
    expectError(await gw.api('GET', '/v1/models', { token: key.secret }), 401, 'authentication_error');
  });

  test('lastUsed is recorded after use', async () => {
    const acct = await gw.newAccount();
    const key = await gw.newKey(acct);
    await gw.api('GET', '/v1/models', { token: key.secret });
    // Written within a second (keys in use at once are written in one statement).
    const list = await pollUntil(
      () => gw.api('GET', '/account/api-keys', { token: acct.idToken }),
      (r) => r.body.data[0].lastUsed !== null,
      2_000,
      50,
    );
    expect(list.body.data[0].lastUsed).toEqual(expect.any(Number));
  });
});

describe('request bodies', () => {
  test('malformed JSON answers 400, an oversize body 413', async () => {
    const acct = await gw.newAccount();
    expectError(await gw.api('POST', '/account/api-keys', { token: acct.idToken, rawBody: '{"name": ' }), 400, 'invalid_request_error');
    const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
    expectError(await gw.api('POST', '/account/api-keys', { token: acct.idToken, rawBody: big }), 413, 'request_too_large');
  });
});

describe('operator endpoints', () => {
  test('grant, take away (never below zero) and member flag', async () => {
    const acct = await gw.newAccount();
    const grant = await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 12.5, reason: 'promo' } });
    expect(grant.status).toBe(200);
    expect(grant.body).toMatchObject({ balance: 12.5, account: { id: acct.id, balance: 12.5 } });
    const take = await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: -100, reason: 'chargeback' } });
    expect(take.body.balance).toBe(0);
    const member = await gw.api('PATCH', `/admin/accounts/${acct.id}`, { token: ADMIN_TOKEN, body: { member: true } });
    expect(member.body).toMatchObject({ id: acct.id, member: true });
    expect((await gw.api('GET', '/account', { token: acct.idToken })).body.member).toBe(true);
  });

  test('taking away everything takes what sits in credit leases too: the next call is refused, nothing is left to spend', async () => {
    const acct = await gw.newAccount(50);
    const key = await gw.newKey(acct);
    const call = () =>
      gw.api('POST', '/v1/chat/completions', { token: key.secret, body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 } });
    // The first call takes a lease of the account's credits; a second uses it.
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    const before = await gw.balance(acct);
    expect(before).toBeGreaterThan(0);
    const take = await gw.api('POST', `/admin/accounts/${acct.id}/credits`, {
      token: ADMIN_TOKEN,
      body: { credits: -1_000_000, reason: 'closing the account' },
    });
    expect(take.status).toBe(200);
    expect(take.body.balance).toBe(0);
    const refused = await call();
    expect(refused.status).toBe(402);
    expect(refused.body.error.type).toBe('insufficient_credits');
    expect(await gw.balance(acct)).toBe(0);
    await expectLedgerInvariants(gw.gateway.database.db);
  });

  test('a grant that would take the balance past 2^53 micro-credits (where JSON stops being exact) is refused, and moves nothing', async () => {
    const acct = await gw.newAccount();
    const grant = (credits: number) => gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits, reason: 'big' } });
    for (let i = 0; i < 9; i++) expect((await grant(1e9)).status).toBe(200);
    const over = await grant(1e9);
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ type: 'invalid_request_error', param: 'credits', code: 'balance_too_large' });
    expect(await gw.balance(acct)).toBe(9e9);
    // Up to the bound, exact to the micro-credit.
    const top = await grant(7_199_254.740991);
    expect(top.body.balance).toBe(Number('9007199254.740991'));
    await expectLedgerInvariants(gw.gateway.database.db);
  });

  test('wrong admin token 401, an ordinary ID token 403, unknown account 404, bad body 400 with param', async () => {
    const acct = await gw.newAccount();
    expectError(
      await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: 'wrong-token-wrong-token', body: { credits: 1, reason: 'x' } }),
      401,
      'authentication_error',
    );
    expectError(
      await gw.api('POST', `/admin/accounts/acct_missing/credits`, { token: ADMIN_TOKEN, body: { credits: 1, reason: 'x' } }),
      404,
      'not_found_error',
    );
    const bad = await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 'lots', reason: 'x' } });
    expectError(bad, 400, 'invalid_request_error');
    expect(bad.body.error.param).toBe('credits');
    // A valid ID token of an account that is not an operator's: known, and refused.
    expectError(await gw.api('PATCH', `/admin/accounts/${acct.id}`, { token: acct.idToken, body: { member: true } }), 403, 'permission_denied');
  });
});

test("an API key sent where the account owner's ID token goes is a 401 that says so (code invalid_api_key, as CONTRACT has it)", async () => {
  const acct = await gw.newAccount();
  const key = await gw.newKey(acct);
  const res = await gw.api('GET', '/account', { token: key.secret });
  expectError(res, 401, 'authentication_error');
  expect(res.body.error).toMatchObject({ code: 'invalid_api_key', message: expect.stringContaining('not an API key') });
  // Anything else that is not a valid ID token keeps the plain answer.
  expect((await gw.api('GET', '/account', { token: 'not-a-token' })).body.error.message).toBe('Invalid ID token.');
});
