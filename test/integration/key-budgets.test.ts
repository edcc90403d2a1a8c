/**
 * A key's budgets per UTC week and month on a real database (PGlite, or PostgreSQL in CI's second
 * pass), through the lease books of two instances sharing one account and one recall feed: what
 * the key's calls are charged never passes a budget, however they race; a spent budget is the 429
 * to its period's end (timed on the calling instance's clock, here frozen at a week's and a
 * month's last hours), a new period gives the room back, a charge beyond its lease stops at the
 * budget, and each crossing of 80% and 100% of a budget is written once.
 */
import { startTestServices, type AccountRef, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { fakeClock } from '../support/fake-clock';
import { uniqueId } from '../support/unique-id';
import { Billing } from '../../src/domain/credits/billing';
import { ChargeBatcher } from '../../src/domain/credits/charge-batcher';
import { LeaseBook, type LeaseBookOptions } from '../../src/domain/credits/lease-book';
import { takeLease } from '../../src/domain/credits/lease-take';
import { Ledger } from '../../src/domain/credits/ledger';
import type { BudgetPeriod, Budgets } from '../../src/domain/credits/budgets';
import { DomainError } from '../../src/domain/errors/domain-error';
import type { KeyPrincipal } from '../../src/domain/keys/principal';
import { creditsToMicro as micro } from '../../src/domain/shared/money';
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { SqlLedgerRepository } from '../../src/infra/db/repositories/sql-ledger-repository';

let gw: TestServices;
const books: LeaseBook[] = [];
beforeAll(async () => {
  gw = await startTestServices();
});
afterAll(async () => {
  for (const book of books) await book.stop();
  try {
    await expectLedgerInvariants(gw.database.db);
  } finally {
    await gw.close();
  }
});

const db = () => gw.database.db;
const recalls = new LocalTopicFeed();

function instance(name: string, options: Partial<LeaseBookOptions> = {}): { book: LeaseBook; billing: Billing } {
  const store = new SqlLeaseStore(db());
  const book = new LeaseBook(store, new ChargeBatcher(store, 0, 1), recalls, {
    instanceId: `inst_${name}_${uniqueId('i')}`,
    idleMs: 60_000,
    heartbeatMs: 60_000,
    graceSeconds: 600,
    wantFactor: 32,
    minWantMicro: micro(1),
    ...options,
  });
  books.push(book);
  return { book, billing: new Billing(book) };
}

/** A live key of the account with these budgets (credits), as its owner creates it, and what it authenticates with. */
async function keyWith(account: AccountRef, budgets: Partial<Record<BudgetPeriod, number>>): Promise<KeyPrincipal> {
  const { id } = await gw.newKey(account, { budgets: Object.entries(budgets).map(([period, credits]) => ({ period, credits })) });
  const inMicro = (p: BudgetPeriod) => (budgets[p] === undefined ? null : micro(budgets[p]));
  const all: Budgets = { day: inMicro('day'), week: inMicro('week'), month: inMicro('month') };
  return { kind: 'key', keyId: id, accountId: account.id, mode: 'live', allowedModels: null, blockedModels: null, budgets: all };
}

/** A client's call of `credits` that honours the 429 to retry in a second (at the next settle here): its outcome. */
function caller(settles: Settles) {
  return async (billing: Billing, key: KeyPrincipal, credits: number, id: string): Promise<string> => {
    for (let attempt = 0; attempt < 60; attempt++) {
      const hold = await billing.hold(key, micro(credits), 'flux-dev', id).catch((e: DomainError) => e);
      if (!(hold instanceof DomainError)) {
        settles.admitted();
        // Held in flight a moment, so that calls overlap across the instances.
        await new Promise<void>((r) => setImmediate(r));
        await billing.settle(hold, micro(credits));
        settles.settled();
        return 'charged';
      }
      if (hold.code !== 'credits_in_flight') return `${hold.type} ${hold.code}`;
      await settles.next();
    }
    return 'gave up';
  };
}

/** The calls admitted and not yet settled, for clients that retry once room may have come back. */
class Settles {
  private inFlight = 0;
  private waiters: Array<() => void> = [];
  admitted(): void {
    this.inFlight++;
  }
  settled(): void {
    this.inFlight--;
    for (const wake of this.waiters.splice(0)) wake();
  }
  next(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }
}

const periodSpend = async (keyId: string, period: 'week' | 'month') =>
  Number(
    (
      await db().one<{ s: string | null }>(
        `select sum(spent_micro) as s from key_period_spend where api_key_id = ? and period = ? and starts = date_trunc(?, (now() at time zone 'UTC')::date::timestamp)::date`,
        [keyId, period, period],
      )
    )?.s ?? 0,
  );
const charged = async (keyId: string) =>
  Number(
    (await db().one<{ s: string }>(
      `select coalesce((select sum(amount_micro) from lease_charges where api_key_id = ?), 0)
              - coalesce((select sum(amount_micro) from ledger_entries where api_key_id = ? and kind = 'charge'), 0) as s`,
      [keyId, keyId],
    ))!.s,
  );

test.each(['week', 'month'] as const)(
  'a %s budget holds on two instances: concurrent calls together are charged at most the budget, every one that fits is served, the rest are refused for the budget',
  async (period) => {
    const acct = await gw.newAccount(1000);
    const key = await keyWith(acct, { [period]: 30 });
    const parts = [instance(`${period}-a`), instance(`${period}-b`)];
    const call = caller(new Settles());
    // Fourteen images of 3 credits, 42 credits asked of a 30-credit budget, alternating between the instances.
    const outcomes = await Promise.all(Array.from({ length: 14 }, (_, i) => call(parts[i % 2].billing, key, 3, `img-${period}-${i}`)));
    expect(outcomes.filter((o) => o === 'charged')).toHaveLength(10);
    expect(outcomes.filter((o) => o !== 'charged')).toEqual(Array(4).fill(`budget_exceeded ${period}_budget`));
    for (const { book } of parts) await book.stop();
    expect(await charged(key.keyId)).toBe(micro(30));
    expect(await periodSpend(key.keyId, period)).toBe(micro(30));
    expect(await gw.balance(acct)).toBe(970);
    await expectLedgerInvariants(db());
  },
);

test("a spent week's budget is refused until Monday 00:00 UTC, timed on the instance's clock (Sunday 23:00 here); a new week gives the room back", async () => {
  const clock = fakeClock();
  clock.stepWall(Date.parse('2026-12-13T23:00:00Z') - clock.now());
  const acct = await gw.newAccount(100);
  const key = await keyWith(acct, { week: 10, month: 50 });
  const { billing, book } = instance('sunday', { clock });
  await billing.settle(await billing.hold(key, micro(9), 'flux-dev', 'img-sunday-1'), micro(9));
  const refused = await billing.hold(key, micro(3), 'flux-dev', 'img-sunday-2').catch((e: DomainError) => e);
  expect(refused).toMatchObject({ status: 429, type: 'budget_exceeded', code: 'week_budget', retryAfterSeconds: 3600 });
  // The database's week turns (its spend rows are last week's now): the room is back, the month's spend stays.
  await db().run(`update key_period_spend set starts = starts - 7 where api_key_id = ? and period = 'week'`, [key.keyId]);
  const next = await billing.hold(key, micro(3), 'flux-dev', 'img-sunday-3');
  expect(await billing.settle(next, micro(3))).toBe(micro(3));
  await book.stop();
  expect(await periodSpend(key.keyId, 'week')).toBe(micro(3));
  expect(await periodSpend(key.keyId, 'month')).toBe(micro(12));
});

test("a spent month's budget is refused until the 1st, timed on the instance's clock (December 31, 22:30 here); a new month gives the room back", async () => {
  const clock = fakeClock();
  clock.stepWall(Date.parse('2026-12-31T22:30:00Z') - clock.now());
  const acct = await gw.newAccount(100);
  const key = await keyWith(acct, { month: 10 });
  const { billing, book } = instance('new-year', { clock });
  await billing.settle(await billing.hold(key, micro(10), 'flux-dev', 'img-year-1'), micro(10));
  const refused = await billing.hold(key, micro(1), 'svc-chat-1', 'chatcmpl-year-2').catch((e: DomainError) => e);
  expect(refused).toMatchObject({ status: 429, type: 'budget_exceeded', code: 'month_budget', retryAfterSeconds: 5400 });
  await db().run(`update key_period_spend set starts = (starts - interval '1 month')::date where api_key_id = ? and period = 'month'`, [key.keyId]);
  expect(await billing.settle(await billing.hold(key, micro(1), 'svc-chat-1', 'chatcmpl-year-3'), micro(1))).toBe(micro(1));
  await book.stop();
});

test('of several budgets short, the refusal names the one whose period ends last, when room comes back', async () => {
  const short = async (day: string, rooms: [number | null, number | null, number | null]) =>
    Number((await db().one<{ s: number }>(`select svc_budget_short(?::date, 10, ?, ?, ?) as s`, [day, ...rooms]))!.s);
  // Wednesday 30 December: the week ends on January 4th, after the month.
  expect(await short('2026-12-30', [5, 5, 5])).toBe(3);
  // Thursday 24 December: the month ends on January 1st, after the week (December 28th).
  expect(await short('2026-12-24', [5, 5, 5])).toBe(4);
  expect(await short('2026-12-24', [5, 20, null])).toBe(2);
  expect(await short('2026-12-24', [null, 10, 20])).toBe(0);
  // Ending together, the longer period: Sunday's day and week; the last of May, a Sunday, all three.
  expect(await short('2026-12-27', [5, 5, null])).toBe(3);
  expect(await short('2026-05-31', [5, 5, 5])).toBe(4);
  expect(await short('2026-05-31', [5, null, null])).toBe(2);
});

test('a charge beyond its lease stops at the week budget on any number of instances: the rest is uncollected, for the week budget', async () => {
  const acct = await gw.newAccount(100);
  const key = await keyWith(acct, { week: 5 });
  const store = new SqlLeaseStore(db());
  // Two instances' leases of 2 credits: 4 of the 5 taken.
  const leases = await Promise.all(
    ['a', 'b'].map(async (side) => {
      const id = uniqueId('lease');
      await takeLease(store, {
        id,
        accountId: acct.id,
        keyId: key.keyId,
        budgets: key.budgets,
        minMicro: micro(2),
        wantMicro: micro(2),
        instanceId: `inst_week_${side}`,
        now: new Date(),
      });
      return id;
    }),
  );
  // Each call used its lease and 2 credits more: 4 asked beyond the leases, 1 left under the budget.
  const rows = leases.map((leaseId) => ({
    requestId: uniqueId('chatcmpl'),
    leaseId,
    accountId: acct.id,
    keyId: key.keyId,
    model: 'svc-chat-1',
    leaseMicro: micro(2),
    excessMicro: micro(2),
  }));
  const outcomes = (await Promise.all(rows.map((r) => store.record([r])))).flat();
  expect(outcomes.reduce((sum, o) => sum + o.chargedMicro, 0)).toBe(micro(5));
  expect(await periodSpend(key.keyId, 'week')).toBe(micro(5));
  const uncollected = await db().all<{ amount_micro: string; reason: string }>(`select amount_micro, reason from uncollected_charges where api_key_id = ?`, [
    key.keyId,
  ]);
  expect(uncollected.map((u) => u.reason)).toEqual(['week_budget', 'week_budget']);
  expect(uncollected.reduce((sum, u) => sum + Number(u.amount_micro), 0)).toBe(micro(3));
  for (const id of leases) await store.close(id);
  await expectLedgerInvariants(db());
});

test("a charge straight to the balance (a video job's) past the month's budget is refused for it, and moves nothing", async () => {
  const acct = await gw.newAccount(100);
  const key = await keyWith(acct, { month: 20 });
  const ledger = new Ledger(new SqlLedgerRepository());
  const spending = { id: key.keyId, budgets: key.budgets };
  await db().transaction((tx) => ledger.charge(tx, { accountId: acct.id, key: spending, amountMicro: micro(15), reference: uniqueId('vid') }));
  await expect(
    db().transaction((tx) => ledger.charge(tx, { accountId: acct.id, key: spending, amountMicro: micro(10), reference: uniqueId('vid') })),
  ).rejects.toMatchObject({ type: 'budget_exceeded', code: 'month_budget' });
  expect(await gw.balance(acct)).toBe(85);
  expect(await periodSpend(key.keyId, 'month')).toBe(micro(15));
});
