/**
 * The daily-spend day comes from one clock, the database's, whatever the calling instance's
 * clock says (as libfaketime would skew it): a video's charge and its refund land on the same
 * day, and an instance whose clock is a day ahead gives no key a second day's cap.
 */
import { NO_BUDGETS } from '../../src/domain/credits/budgets';
import { startTestServices, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { Ledger } from '../../src/domain/credits/ledger';
import { SqlLedgerRepository } from '../../src/infra/db/repositories/sql-ledger-repository';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { takeLease } from '../../src/domain/credits/lease-take';
import { creditsToMicro } from '../../src/domain/shared/money';

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

const ledger = new Ledger(new SqlLedgerRepository());

const db = () => gw.database.db;
const databaseDay = async () => (await db().one<{ d: string }>(`select to_char((now() at time zone 'UTC')::date, 'YYYY-MM-DD') as d`))!.d;
const spendByDay = async (keyId: string) =>
  (
    await db().all<{ day: string; spent: string }>(
      `select to_char(day, 'YYYY-MM-DD') as day, spent_micro as spent from key_daily_spend where api_key_id = ? order by day`,
      [keyId],
    )
  ).map((r) => [r.day, Number(r.spent)]);

test("a charge made by an instance whose clock is a day off counts on the database's day, and its refund gives it back to that day", async () => {
  const acct = await gw.newAccount(100);
  const { id: keyId } = await gw.newKey(acct, { dailySpendCap: 30 });
  const key = { id: keyId, budgets: { ...NO_BUDGETS, day: creditsToMicro(30) } };
  const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
  await db().transaction((tx) => ledger.charge(tx, { accountId: acct.id, key, amountMicro: creditsToMicro(15), reference: 'vid_skewed', now: tomorrow }));
  const today = await databaseDay();
  expect(await spendByDay(keyId)).toEqual([[today, creditsToMicro(15)]]);
  expect(await db().transaction((tx) => ledger.refundOnce(tx, { accountId: acct.id, reference: 'vid_skewed', reason: 'failed' }))).toBe(true);
  expect(await spendByDay(keyId)).toEqual([[today, 0]]);
  // The cap of that one day holds across instances that disagree about the date.
  const yesterday = new Date(Date.now() - 24 * 3600 * 1000);
  for (const [i, now] of [tomorrow, yesterday].entries()) {
    await db().transaction((tx) => ledger.charge(tx, { accountId: acct.id, key, amountMicro: creditsToMicro(15), reference: `vid_day_${i}`, now }));
  }
  await expect(
    db().transaction((tx) => ledger.charge(tx, { accountId: acct.id, key, amountMicro: creditsToMicro(15), reference: 'vid_day_2', now: tomorrow })),
  ).rejects.toMatchObject({ type: 'daily_cap_exceeded' });
  expect(await spendByDay(keyId)).toEqual([[today, creditsToMicro(30)]]);
});

test("a lease taken by an instance whose clock is a day ahead counts against the database's day: no second day's cap", async () => {
  const acct = await gw.newAccount(100);
  const { id: keyId } = await gw.newKey(acct, { dailySpendCap: 5 });
  const store = new SqlLeaseStore(db());
  // `now` is the calling instance's clock.
  const take = (id: string, now: Date) =>
    takeLease(store, {
      id,
      accountId: acct.id,
      keyId,
      budgets: { ...NO_BUDGETS, day: creditsToMicro(5) },
      minMicro: creditsToMicro(5),
      wantMicro: creditsToMicro(5),
      instanceId: 'inst_clock',
      now,
    });
  const today = await databaseDay();
  const tomorrow = new Date(Date.now() + 24 * 3600 * 1000);
  expect((await take('lease_clock_a', new Date())).amountMicro).toBe(creditsToMicro(5));
  await expect(take('lease_clock_b', tomorrow)).rejects.toMatchObject({ type: 'daily_cap_exceeded' });
  expect(await spendByDay(keyId)).toEqual([[today, creditsToMicro(5)]]);
  expect(await store.close('lease_clock_a')).toBe(creditsToMicro(5));
});
