/**
 * An operator's removal of credits from an account whose calls keep coming: what the balance
 * holds is taken at once, what sits in the account's credit leases as each lease comes back, so
 * "take everything" leaves nothing to spend even while the account is busy. A lease taken later
 * (a later grant's credits) is not touched, and a removal the balance covers leaves leases alone.
 */
import { writeModelsFile } from '../support/models-file';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';

let upstream: FakeOpenAIUpstream;
let models: ReturnType<typeof writeModelsFile>;

beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  models = writeModelsFile({ 'svc-chat-1': { provider: 'openai-compatible', upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 30 } });
});
const gw = useTestGateway(() => ({ MODELS_FILE: models.path }));
afterAll(async () => {
  await upstream.close();
  models.remove();
});

const call = (secret: string) =>
  gw.api('POST', '/v1/chat/completions', { token: secret, body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 } });
const adjust = (acct: TestAccount, credits: number, reason: string) =>
  gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits, reason } });
/** What the removal with `reason` took, in credits (its entries are negative grants). */
const removed = async (acct: TestAccount, reason: string) => {
  const row = await gw.gateway.database.db.one<{ m: string }>(
    `select coalesce(-sum(amount_micro), 0)::text as m from ledger_entries where account_id = ? and kind = 'grant' and reason = ?`,
    [acct.id, reason],
  );
  return Number(row!.m) / 1e6;
};
const credits = (res: { headers: Headers }) => Number(res.headers.get('x-svc-credits'));

test('taking everything while a call is in flight and other keys keep calling: the removal takes the balance at once and the lease as it comes back; nothing is left to spend', async () => {
  const acct = await gw.newAccount(50);
  const [busy, other] = [await gw.newKey(acct), await gw.newKey(acct)];
  const first = await call(busy.secret);
  expect(first.status).toBe(200);

  // A call of `busy` in flight on its key's lease: the lease cannot close until it settles.
  upstream.setMode('held-json');
  const asked = upstream.requests.length;
  const inFlight = call(busy.secret);
  await pollUntil(
    async () => upstream.requests.length,
    (n) => n > asked,
    5_000,
    10,
  );
  upstream.setMode('ok');

  const removal = adjust(acct, -1_000_000, 'closing the account');
  // The balance is taken at once: what the account shows drops to nothing before the lease is back.
  await pollUntil(
    () => gw.balance(acct),
    (b) => b === 0,
    3_000,
    20,
  );
  // Meanwhile the account's other key finds nothing to lease: the removal takes the balance
  // first, so a lease it calls back cannot be leased again by calls like these.
  for (let i = 0; i < 5; i++) {
    const refused = await call(other.secret);
    expect(refused.status).toBe(402);
    expect(refused.body.error.type).toBe('insufficient_credits');
  }

  upstream.releaseHeld();
  const answered = await inFlight;
  expect(answered.status).toBe(200);
  const take = await removal;
  expect(take.status).toBe(200);
  expect(take.body.balance).toBe(0);

  // The in-flight call was charged from its lease; everything else went to the removal.
  const charged = credits(first) + credits(answered);
  expect(charged).toBeGreaterThan(0);
  expect(await removed(acct, 'closing the account')).toBeCloseTo(50 - charged, 6);
  expect(await gw.balance(acct)).toBe(0);
  expect((await call(busy.secret)).status).toBe(402);
  expect(await gw.gateway.database.db.all(`select id from credit_leases where account_id = ? and closed_at is null`, [acct.id])).toEqual([]);
  await expectLedgerInvariants(gw.gateway.database.db);

  // The removal is over once its leases are back: a later grant's credits are the account's to spend.
  await adjust(acct, 10, 'a fresh start');
  const later = await call(busy.secret);
  expect(later.status).toBe(200);
  await gw.gateway.services.leaseBook.returnIdleNow();
  expect(await gw.balance(acct)).toBeCloseTo(10 - credits(later), 6);
  expect(await removed(acct, 'closing the account')).toBeCloseTo(50 - charged, 6);
});

test('a removal the balance covers takes it from the balance alone: the account keeps its leases and goes on calling', async () => {
  const acct = await gw.newAccount(50);
  const key = await gw.newKey(acct);
  const first = await call(key.secret);
  const open = () => gw.gateway.database.db.all<{ id: string }>(`select id from credit_leases where account_id = ? and closed_at is null`, [acct.id]);
  const [lease] = await open();
  expect(lease).toBeDefined();

  const take = await adjust(acct, -1, 'a refund reversed');
  expect(take.status).toBe(200);
  expect(take.body.balance).toBeCloseTo(49 - credits(first), 6);
  expect(await open()).toEqual([lease]);
  const next = await call(key.secret);
  expect(next.status).toBe(200);
  await gw.gateway.services.leaseBook.returnIdleNow();
  expect(await gw.balance(acct)).toBeCloseTo(49 - credits(first) - credits(next), 6);
  expect(await removed(acct, 'a refund reversed')).toBe(1);
});

test('a removal larger than everything takes everything, once, and a second removal finds nothing', async () => {
  const acct = await gw.newAccount(20);
  const key = await gw.newKey(acct);
  const first = await call(key.secret);
  expect((await adjust(acct, -30, 'one')).body.balance).toBe(0);
  expect((await adjust(acct, -30, 'two')).body.balance).toBe(0);
  expect(await removed(acct, 'one')).toBeCloseTo(20 - credits(first), 6);
  expect(await removed(acct, 'two')).toBe(0);
  const row = await gw.gateway.database.db.one<{ pending: string; leases: string[] }>(
    `select removal_pending_micro::text as pending, removal_leases as leases from accounts where id = ?`,
    [acct.id],
  );
  expect(row).toEqual({ pending: '0', leases: [] });
  await expectLedgerInvariants(gw.gateway.database.db);
});
