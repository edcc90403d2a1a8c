/**
 * A key's budgets through both doors, as an owner and a client see them: set on create and edit
 * (the day's is `dailySpendCap`), refused with the field named in each door's spelling, shown in
 * the key record with what was spent; a call past the week's budget is the 429 `budget_exceeded`
 * with Retry-After to Monday 00:00 UTC; GET /v1/key answers the key about itself and nothing of
 * any other key.
 */
import { periodEnd, secondsUntilPeriodEnd } from '../../src/domain/credits/budgets';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();

const gql = (token: string, query: string, variables?: Record<string, unknown>) => gw.api('POST', '/graphql', { token, body: { query, variables } });

/** flux-dev: 3 credits an image, served by the simulator for live keys too. */
const image = (secret: string) =>
  gw.api('POST', '/v1/images/generations', { token: secret, body: { model: 'flux-dev', prompt: 'a lighthouse', size: '64x64' } });

/** The database's time, which a budget's periods follow. */
const databaseNow = async () => new Date((await gw.gateway.database.db.one<{ now: Date | string }>(`select now() as now`))!.now);

const recordOf = async (acct: TestAccount, id: string) =>
  (await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data.find((k: any) => k.id === id);

describe('budgets on the key record', () => {
  let acct: TestAccount;
  beforeAll(async () => {
    acct = await gw.newAccount(100);
  });

  test("set on create and edit, the day's budget shown as dailySpendCap and the cap as the day's budget", async () => {
    const created = await gw.api('POST', '/account/api-keys', {
      token: acct.idToken,
      body: {
        name: 'budgeted',
        budgets: [
          { period: 'month', credits: 200 },
          { period: 'day', credits: 5 },
        ],
      },
    });
    expect(created.status).toBe(201);
    const now = await databaseNow();
    expect(created.body).toMatchObject({
      dailySpendCap: 5,
      budgets: [
        { period: 'day', credits: 5, spent: 0, resetsAt: periodEnd('day', now).toISOString() },
        { period: 'month', credits: 200, spent: 0, resetsAt: periodEnd('month', now).toISOString() },
      ],
      spend: { today: 0, week: 0, month: 0 },
    });
    const id = created.body.id as string;
    const patched = await gw.api('PATCH', `/account/api-keys/${id}`, { token: acct.idToken, body: { dailySpendCap: 7 } });
    expect(patched.body.budgets.map((b: any) => [b.period, b.credits])).toEqual([
      ['day', 7],
      ['month', 200],
    ]);
    const replaced = await gw.api('PATCH', `/account/api-keys/${id}`, { token: acct.idToken, body: { budgets: [{ period: 'week', credits: 40 }] } });
    expect(replaced.body).toMatchObject({ dailySpendCap: null, budgets: [{ period: 'week', credits: 40, spent: 0 }] });
    const cleared = await gw.api('PATCH', `/account/api-keys/${id}`, { token: acct.idToken, body: { budgets: null } });
    expect(cleared.body).toMatchObject({ dailySpendCap: null, budgets: [] });
  });

  test.each([
    [
      'a period twice',
      {
        budgets: [
          { period: 'week', credits: 1 },
          { period: 'week', credits: 2 },
        ],
      },
      'budgets[1].period',
      /at most one budget per period/,
    ],
    ['an unknown period', { budgets: [{ period: 'year', credits: 1 }] }, 'budgets[0].period', /day.*week.*month|Invalid/],
    ['credits below one micro-credit', { budgets: [{ period: 'day', credits: 0.0000001 }] }, 'budgets[0].credits', /round to zero/],
    ['the day named twice, differently', { dailySpendCap: 3, budgets: [{ period: 'day', credits: 4 }] }, 'dailySpendCap', /differs from the 'day' budget/],
  ])('%s over REST is a 400 naming the field; the key stays as it was', async (_name, body, param, message) => {
    const key = await gw.newKey(acct, { budgets: [{ period: 'week', credits: 9 }] });
    const res = await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param, message: expect.stringMatching(message) });
    expect((await recordOf(acct, key.id)).budgets).toEqual([expect.objectContaining({ period: 'week', credits: 9 })]);
    await gw.api('DELETE', `/account/api-keys/${key.id}`, { token: acct.idToken });
  });

  test('over GraphQL: budgets on create and update, read on apiKeys; a refusal names the field in GraphQL spelling', async () => {
    const created = await gql(
      acct.idToken,
      'mutation { createApiKey(input: { name: "gql", budgets: [{ period: WEEK, credits: 12.5 }] }) { id budgets { period credits spent } } }',
    );
    const id = created.body.data.createApiKey.id as string;
    expect(created.body.data.createApiKey.budgets).toEqual([{ period: 'WEEK', credits: 12.5, spent: 0 }]);
    const UPDATE =
      'mutation($id: ID!, $input: UpdateApiKeyInput!) { updateApiKey(id: $id, input: $input) { dailySpendCap budgets { period credits } spend { today week month } } }';
    const updated = await gql(acct.idToken, UPDATE, {
      id,
      input: {
        budgets: [
          { period: 'DAY', credits: 2 },
          { period: 'MONTH', credits: 30 },
        ],
      },
    });
    expect(updated.body.data.updateApiKey).toEqual({
      dailySpendCap: 2,
      budgets: [
        { period: 'DAY', credits: 2 },
        { period: 'MONTH', credits: 30 },
      ],
      spend: { today: 0, week: 0, month: 0 },
    });
    const twice = await gql(acct.idToken, UPDATE, {
      id,
      input: {
        budgets: [
          { period: 'DAY', credits: 2 },
          { period: 'DAY', credits: 3 },
        ],
      },
    });
    expect(twice.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param: 'budgets[1].period' });
    const clash = await gql(acct.idToken, UPDATE, { id, input: { dailySpendCap: 1, budgets: [{ period: 'DAY', credits: 2 }] } });
    expect(clash.body.errors[0].extensions).toEqual({ code: 'invalid_request_error', param: 'dailySpendCap' });
    const listed = await gql(acct.idToken, '{ apiKeys { id budgets { period credits resetsAt } } }');
    expect(listed.body.data.apiKeys.find((k: any) => k.id === id).budgets.map((b: any) => b.period)).toEqual(['DAY', 'MONTH']);
  });
});

test("a call past the week's budget is the 429 budget_exceeded, Retry-After to Monday 00:00 UTC; what was spent shows on the record and on GET /v1/key", async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct, { name: 'weekly', budgets: [{ period: 'week', credits: 10 }] });
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await image(key.secret)).status);
  expect(statuses).toEqual([200, 200, 200]);
  const refused = await image(key.secret);
  expect(refused.status).toBe(429);
  expect(refused.body.error).toMatchObject({ type: 'budget_exceeded', code: 'week_budget' });
  // Timed on the gateway's clock; the response's Date says when that was, to the second.
  const answeredAt = new Date(refused.headers.get('date')!);
  expect(Math.abs(Number(refused.headers.get('retry-after')) - secondsUntilPeriodEnd('week', answeredAt))).toBeLessThanOrEqual(1);
  // 9 spent of 10: the key's lease is back, its room is what the record and the key itself show.
  const now = await databaseNow();
  const standing = { period: 'week', credits: 10, spent: 9, resetsAt: periodEnd('week', now).toISOString() };
  expect(await recordOf(acct, key.id)).toMatchObject({ budgets: [standing], spend: { today: 9, week: 9, month: 9 } });
  const self = await gw.api('GET', '/v1/key', { token: key.secret });
  expect(self.status).toBe(200);
  expect(self.body).toEqual({
    id: key.id,
    name: 'weekly',
    mode: 'live',
    allowedModels: null,
    blockedModels: null,
    expiresAt: null,
    budgets: [standing],
    spend: { today: 9, week: 9, month: 9 },
    accountBalance: 91,
    rateLimits: { chat: 60, image: 30, video: 5 },
  });
});

test('GET /v1/key counts what calls were charged, not the lease they are paid from, and shows nothing of any other key', async () => {
  const acct = await gw.newAccount(100);
  const spender = await gw.newKey(acct, { name: 'spender', dailySpendCap: 50 });
  const quiet = await gw.newKey(acct, { name: 'quiet', budgets: [{ period: 'month', credits: 5 }] });
  const stranger = await gw.newKey(await gw.newAccount(10), { name: 'stranger' });
  expect((await image(spender.secret)).status).toBe(200);
  // The spender's lease holds more than the 3 credits charged (and is open still).
  const leased = await gw.gateway.database.db.one<{ n: string }>(
    `select count(*) as n from credit_leases where api_key_id = ? and closed_at is null and amount_micro > 3000000`,
    [spender.id],
  );
  expect(Number(leased!.n)).toBe(1);
  const self = (await gw.api('GET', '/v1/key', { token: spender.secret })).body;
  expect(self).toMatchObject({ id: spender.id, name: 'spender', budgets: [{ period: 'day', credits: 50, spent: 3 }], spend: { today: 3, week: 3, month: 3 } });
  expect(self.accountBalance).toBe(97);
  // The account's other key: its own budget, none of the spend.
  expect((await gw.api('GET', '/v1/key', { token: quiet.secret })).body).toMatchObject({
    id: quiet.id,
    name: 'quiet',
    budgets: [{ period: 'month', credits: 5, spent: 0 }],
    spend: { today: 0, week: 0, month: 0 },
    accountBalance: 97,
  });
  // Another account's key: its own account's balance, nothing of this one's.
  const other = (await gw.api('GET', '/v1/key', { token: stranger.secret })).body;
  expect(other).toMatchObject({ id: stranger.id, name: 'stranger', budgets: [], spend: { today: 0, week: 0, month: 0 }, accountBalance: 10 });
  expect(JSON.stringify(other)).not.toContain(spender.id);
  // An ID token is not a key here.
  expect((await gw.api('GET', '/v1/key', { token: acct.idToken })).status).toBe(401);
});
