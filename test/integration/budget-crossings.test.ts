/**
 * A key's committed spend crossing 80% and 100% of a budget, on a real database: found where the
 * money moves and written once per key, period, budget and threshold (key_budget_notices). A
 * charge within a watched lease (one taken with the key's spend, leases whole, at 80% of a budget
 * or more) answers the crossing it made; a lease taken far from every threshold is not watched,
 * and its charges take the one-statement path; a crossing made within such a lease while another
 * instance's watched lease is open is written when the lease closes; a video charge writes its own;
 * each is the account's `key.budget_threshold` event, once per period and percent.
 */
import { startTestServices, type AccountRef, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { uniqueId } from '../support/unique-id';
import { takeLease } from '../../src/domain/credits/lease-take';
import { Ledger } from '../../src/domain/credits/ledger';
import { NO_BUDGETS, type Budgets } from '../../src/domain/credits/budgets';
import type { ChargeRow } from '../../src/domain/credits/lease-store';
import { creditsToMicro as micro } from '../../src/domain/shared/money';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { SqlLedgerRepository } from '../../src/infra/db/repositories/sql-ledger-repository';

let gw: TestServices;
beforeAll(async () => {
  gw = await startTestServices();
});
afterAll(async () => {
  try {
    await expectLedgerInvariants(gw.database.db);
  } finally {
    await gw.close();
  }
});

const db = () => gw.database.db;
const store = () => new SqlLeaseStore(db());

async function setUp(budgets: Partial<Budgets>) {
  const account: AccountRef = await gw.newAccount(1000);
  const body = Object.entries(budgets).map(([period, m]) => ({ period, credits: m! / 1_000_000 }));
  const { id: keyId } = await gw.newKey(account, { budgets: body });
  const all: Budgets = { ...NO_BUDGETS, ...budgets };
  const take = (minCredits: number, wantCredits = minCredits) =>
    takeLease(store(), {
      id: uniqueId('lease'),
      accountId: account.id,
      keyId,
      budgets: all,
      minMicro: micro(minCredits),
      wantMicro: micro(wantCredits),
      instanceId: uniqueId('inst'),
      now: new Date(),
    });
  const charge = (leaseId: string, credits: number, watched: boolean): ChargeRow => ({
    requestId: uniqueId('chatcmpl'),
    leaseId,
    accountId: account.id,
    keyId,
    model: 'svc-chat-1',
    leaseMicro: micro(credits),
    excessMicro: 0,
    ...(watched ? { watched } : {}),
  });
  const notices = async () =>
    (
      await db().all<{ period: string; percent: number; spent_micro: string }>(
        `select period, percent, spent_micro from key_budget_notices where api_key_id = ? order by period, percent`,
        [keyId],
      )
    ).map((n) => `${n.period} ${n.percent}% at ${Number(n.spent_micro) / 1_000_000}`);
  return { account, keyId, take, charge, notices };
}

test("a charge within a watched lease answers the crossing of 80% it made, once; the crossing of 100% likewise, from the next lease's charge", async () => {
  const { keyId, take, charge, notices } = await setUp({ week: micro(10) });
  // 7 credits leased: the week's spend (leases whole) at 70%, under every threshold: not watched.
  const first = await take(7);
  expect(first).toMatchObject({ amountMicro: micro(7), watched: false });
  const [plain] = await store().record([charge(first.id, 7, false)]);
  expect(plain).toEqual({ requestId: expect.any(String), status: 0, chargedMicro: micro(7) });
  expect(await store().close(first.id)).toBe(0);
  expect(await notices()).toEqual([]);
  // The next lease takes the spend to 80% or more: watched. Its first charge makes 80%.
  const second = await take(1, 2);
  expect(second.watched).toBe(true);
  const [crossing] = await store().record([charge(second.id, 1, true)]);
  expect(crossing.crossings).toEqual([
    { keyId, period: 'week', periodStart: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/), percent: 80, budgetMicro: micro(10), spentMicro: micro(8) },
  ]);
  // Spent further, under 100%: nothing new to tell.
  const [again] = await store().record([charge(second.id, 0.5, true)]);
  expect(again.crossings).toBeUndefined();
  await store().close(second.id);
  // The last 1.5 credits: 100%.
  const third = await take(1.5);
  const [full] = await store().record([charge(third.id, 1.5, true)]);
  expect(full.crossings?.map((c) => `${c.period} ${c.percent}%`)).toEqual(['week 100%']);
  await store().close(third.id);
  expect(await notices()).toEqual(['week 80% at 8', 'week 100% at 10']);
  await expectLedgerInvariants(db());
});

test('a key without budgets, or far from their thresholds, has no lease watched and no crossing written', async () => {
  const free = await setUp({});
  const lease = await free.take(5);
  expect(lease.watched).toBe(false);
  await store().record([free.charge(lease.id, 5, false)]);
  await store().close(lease.id);
  expect(await free.notices()).toEqual([]);
  const roomy = await setUp({ month: micro(100) });
  const small = await roomy.take(2, 10);
  expect(small).toMatchObject({ amountMicro: micro(10), watched: false });
  await store().record([roomy.charge(small.id, 10, false)]);
  await store().close(small.id);
  expect(await roomy.notices()).toEqual([]);
});

test("a crossing made within a lease that was not watched, while another instance's watched lease of the key is open, is written when it closes", async () => {
  const { take, charge, notices } = await setUp({ day: micro(10) });
  // Instance A's lease: 4 of the 10 (40%), not watched; instance B's: 4 more, 80% leases whole: watched.
  const a = await take(4);
  const b = await take(4);
  expect([a.watched, b.watched]).toEqual([false, true]);
  // B spends first (4 committed: 40%); A's 4 make 80%, within a lease nobody watches.
  expect((await store().record([charge(b.id, 4, true)]))[0].crossings).toBeUndefined();
  expect((await store().record([charge(a.id, 4, false)]))[0].crossings).toBeUndefined();
  expect(await notices()).toEqual([]);
  await store().close(a.id);
  expect(await notices()).toEqual(['day 80% at 8']);
  await store().close(b.id);
  expect(await notices()).toEqual(['day 80% at 8']);
});

test("a video charge that takes the month's spend past 80% writes the crossing in its own transaction", async () => {
  const { account, keyId, notices } = await setUp({ month: micro(50) });
  const ledger = new Ledger(new SqlLedgerRepository());
  const key = { id: keyId, budgets: { ...NO_BUDGETS, month: micro(50) } };
  await db().transaction((tx) => ledger.charge(tx, { accountId: account.id, key, amountMicro: micro(30), reference: uniqueId('vid') }));
  expect(await notices()).toEqual([]);
  await db().transaction((tx) => ledger.charge(tx, { accountId: account.id, key, amountMicro: micro(15), reference: uniqueId('vid') }));
  expect(await notices()).toEqual(['month 80% at 45']);
  // A charge rolled back with its job writes nothing.
  await db()
    .transaction(async (tx) => {
      await ledger.charge(tx, { accountId: account.id, key, amountMicro: micro(5), reference: uniqueId('vid') });
      throw new Error('the job row failed');
    })
    .catch(() => undefined);
  expect(await notices()).toEqual(['month 80% at 45']);
});

test("each threshold written is the account's key.budget_threshold event, once per period and percent: a budget raised within the period tells no percent twice", async () => {
  const { account, keyId, notices } = await setUp({ day: micro(10) });
  const ledger = new Ledger(new SqlLedgerRepository());
  const charge = (day: number, credits: number) =>
    db().transaction((tx) =>
      ledger.charge(tx, {
        accountId: account.id,
        key: { id: keyId, budgets: { ...NO_BUDGETS, day: micro(day) } },
        amountMicro: micro(credits),
        reference: uniqueId('vid'),
      }),
    );
  const events = async () =>
    (
      await db().all<{ id: string; occurrence: string; data: any }>(
        `select id, occurrence, data from account_events where account_id = ? and type = 'key.budget_threshold' order by created_at, occurrence`,
        [account.id],
      )
    ).map((e) => ({ ...e, data: typeof e.data === 'string' ? JSON.parse(e.data) : e.data }));
  await charge(10, 8);
  const [eighty] = await events();
  const day = eighty.occurrence.split('/')[2];
  const tomorrow = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();
  expect(eighty).toEqual({
    id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
    occurrence: `${keyId}/day/${day}/80`,
    data: { keyId, period: 'day', percent: 80, credits: 10, spent: 8, resetsAt: tomorrow },
  });
  await gw.services.keys.update(account.id, keyId, { budgets: [{ period: 'day', credits: 20 }] });
  await charge(20, 8);
  expect(await notices()).toEqual(['day 80% at 8', 'day 80% at 16']);
  expect(await events()).toEqual([eighty]);
  await charge(20, 4);
  expect((await events()).map((e) => [e.occurrence, e.data.credits, e.data.spent])).toEqual([
    [`${keyId}/day/${day}/80`, 10, 8],
    [`${keyId}/day/${day}/100`, 20, 20],
  ]);
});
