import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

/**
 * Credit amounts in requests (a key's dailySpendCap over REST and GraphQL, operator grants) are
 * kept exactly in micro-credits: an amount the ledger cannot hold (below one micro-credit, more
 * than six decimals, not finite, negative where it must be positive, too large) is a 400 naming
 * the field, and nothing changes.
 */
const gw = useTestGateway();

const gql = (token: string, query: string, variables?: Record<string, unknown>) => gw.api('POST', '/graphql', { token, body: { query, variables } });

const expect400 = (res: { status: number; body: any }, param: string, message: RegExp) => {
  expect(res.status).toBe(400);
  expect(res.body.error).toEqual({ type: 'invalid_request_error', param, code: null, message: expect.stringMatching(message) });
};

/** JSON the way a client writes it: the raw text, so 1e400 reaches the server as such. */
const rawJson = (method: string, path: string, token: string, text: string) =>
  fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: text }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as any,
  }));

const BELOW_PRECISION = /round to zero/;
const TOO_PRECISE = /more than 6 decimal places/;

describe('dailySpendCap over REST', () => {
  let acct: TestAccount;
  let key: { id: string };
  const capOf = async () => (await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data.find((k: any) => k.id === key.id).dailySpendCap;
  beforeAll(async () => {
    acct = await gw.newAccount(10);
    key = await gw.newKey(acct, { dailySpendCap: 5 });
  });

  test.each([
    ['a positive amount below one micro-credit', 0.0000001, BELOW_PRECISION],
    ['an amount that would round to zero, in exponent form', 4e-7, BELOW_PRECISION],
    ['seven decimals', 1.0000005, TOO_PRECISE],
    ['a float artefact', 0.1 + 0.2, TOO_PRECISE],
    ['zero', 0, /positive/],
    ['a negative amount', -1, /positive/],
    ['too large', 1e10, /at most 1,000,000,000/],
  ])('PATCH with %s is a 400 naming dailySpendCap; the cap stays', async (_name, value, message) => {
    const res = await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { dailySpendCap: value } });
    expect400(res, 'dailySpendCap', message);
    expect(await capOf()).toBe(5);
  });

  test('POST with an amount that would round to zero creates no key', async () => {
    const before = (await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data.length;
    const res = await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: { name: 'tiny', dailySpendCap: 0.0000004 } });
    expect400(res, 'dailySpendCap', BELOW_PRECISION);
    expect((await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data.length).toBe(before);
  });

  test('a number JSON cannot hold as a double (1e400 → Infinity) is a 400', async () => {
    const res = await rawJson('PATCH', `/account/api-keys/${key.id}`, acct.idToken, '{"dailySpendCap": 1e400}');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'dailySpendCap' });
    expect(await capOf()).toBe(5);
  });

  test('six decimals are kept exactly, and the smallest amount is one micro-credit', async () => {
    for (const value of [0.000001, 1.000001, 123456.789012, 999_999_999.999999]) {
      const res = await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { dailySpendCap: value } });
      expect(res.status).toBe(200);
      expect(res.body.dailySpendCap).toBe(value);
      const row = await gw.gateway.database.db.one<{ m: string }>(`select daily_spend_cap_micro::text as m from api_keys where id = ?`, [key.id]);
      expect(row!.m).toBe(String(Math.round(value * 1_000_000)));
    }
    await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { dailySpendCap: 5 } });
  });
});

describe('dailySpendCap over GraphQL', () => {
  let acct: TestAccount;
  let key: { id: string };
  const UPDATE = 'mutation($id: ID!, $cap: Float) { updateApiKey(id: $id, input: { dailySpendCap: $cap }) { dailySpendCap } }';
  const capOf = async () => (await gql(acct.idToken, '{ apiKeys { id dailySpendCap } }')).body.data.apiKeys.find((k: any) => k.id === key.id).dailySpendCap;
  beforeAll(async () => {
    acct = await gw.newAccount(10);
    key = await gw.newKey(acct, { dailySpendCap: 5 });
  });

  test.each([
    ['below one micro-credit', 0.0000001, BELOW_PRECISION],
    ['seven decimals', 2.1234567, TOO_PRECISE],
    ['negative', -3, /positive/],
    ['too large', 2e9, /at most/],
  ])('updateApiKey with %s is invalid_request_error naming dailySpendCap; the cap stays', async (_name, cap, message) => {
    const res = await gql(acct.idToken, UPDATE, { id: key.id, cap });
    expect(res.body.data).toBeNull();
    expect(res.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param: 'dailySpendCap' });
    expect(res.body.errors[0].message).toMatch(message);
    expect(await capOf()).toBe(5);
  });

  test('createApiKey with a literal that would round to zero creates no key', async () => {
    const before = (await gql(acct.idToken, '{ apiKeys { id } }')).body.data.apiKeys.length;
    const res = await gql(acct.idToken, 'mutation { createApiKey(input: { dailySpendCap: 0.0000001 }) { id } }');
    expect(res.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param: 'dailySpendCap' });
    expect((await gql(acct.idToken, '{ apiKeys { id } }')).body.data.apiKeys.length).toBe(before);
  });

  test('an infinite variable is refused by GraphQL itself (Float holds finite numbers only), naming the variable', async () => {
    const res = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { authorization: `Bearer ${acct.idToken}`, 'content-type': 'application/json' },
      body: `{"query": ${JSON.stringify(UPDATE)}, "variables": {"id": "${key.id}", "cap": 1e400}}`,
    });
    const body = (await res.json()) as any;
    expect(body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors[0].message).toMatch(/\$cap/);
    expect(await capOf()).toBe(5);
  });

  test('six decimals are kept exactly', async () => {
    const res = await gql(acct.idToken, UPDATE, { id: key.id, cap: 7.654321 });
    expect(res.body.data.updateApiKey.dailySpendCap).toBe(7.654321);
  });
});

describe('operator grants', () => {
  let acct: TestAccount;
  const grant = (credits: unknown) => gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits, reason: 'test' } });
  beforeAll(async () => {
    acct = await gw.newAccount(10);
  });

  test.each([
    ['a grant below one micro-credit', 0.0000001, BELOW_PRECISION],
    ['a removal below one micro-credit', -0.0000009, BELOW_PRECISION],
    ['seven decimals', 2.5000001, TOO_PRECISE],
    ['zero', 0, /zero/],
    ['too large', 1e10, /at most/],
    ['a string', '5', /number/],
  ])('%s is a 400 naming credits; the balance stays', async (_name, credits, message) => {
    expect400(await grant(credits), 'credits', message);
    expect(await gw.balance(acct)).toBe(10);
  });

  test('an infinite grant (1e400 in the JSON) is a 400; the balance stays', async () => {
    const res = await rawJson('POST', `/admin/accounts/${acct.id}/credits`, ADMIN_TOKEN, '{"credits": -1e400, "reason": "test"}');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'credits' });
    expect(await gw.balance(acct)).toBe(10);
  });

  test('a grant of one micro-credit moves the balance by exactly that', async () => {
    const res = await grant(0.000001);
    expect(res.status).toBe(200);
    expect(res.body.balance).toBe(10.000001);
    const row = await gw.gateway.database.db.one<{ m: string }>(`select balance_micro::text as m from accounts where id = ?`, [acct.id]);
    expect(row!.m).toBe('10000001');
  });
});
