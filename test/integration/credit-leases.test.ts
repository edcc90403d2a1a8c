/**
 * Credit leases on a real database (PGlite, or PostgreSQL in CI's second pass): two lease books
 * stand for two instances sharing one account and one recall feed. Checks what a user and an
 * operator would: the balance shown, the ledger, the lease books, never an overdraw. Calls are
 * held in flight, and clients retry, on events (other calls answered or settled), not on time;
 * where a book's timers matter it runs on a fake clock the test steps.
 */
import { startTestServices, type AccountRef, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { pollUntil } from '../support/poll';
import { fakeClock } from '../support/fake-clock';
import { Billing } from '../../src/domain/credits/billing';
import { ChargeBatcher } from '../../src/domain/credits/charge-batcher';
import { LeaseBook, type LeaseBookOptions } from '../../src/domain/credits/lease-book';
import type { LeaseStore } from '../../src/domain/credits/lease-store';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { StreamStarts } from '../../src/domain/credits/stream-starts';
import { DomainError } from '../../src/domain/errors/domain-error';
import type { KeyPrincipal } from '../../src/domain/keys/principal';
import { creditsToMicro, microToCredits } from '../../src/domain/shared/money';
import { NO_BUDGETS } from '../../src/domain/credits/budgets';

const microToCreditsOf = (micro: number) => microToCredits(micro);
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';

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

const recalls = new LocalTopicFeed();
const bookOptions = (name: string, options: Partial<LeaseBookOptions> = {}): LeaseBookOptions => ({
  instanceId: `inst_${name}_${Math.random().toString(36).slice(2)}`,
  idleMs: 60_000,
  heartbeatMs: 60_000,
  graceSeconds: 600,
  wantFactor: 32,
  minWantMicro: creditsToMicro(1),
  ...options,
});
function instance(name: string, options: Partial<LeaseBookOptions> = {}, maxCommits = 1): { book: LeaseBook; billing: Billing; batcher: ChargeBatcher } {
  const store = new SqlLeaseStore(gw.database.db);
  const batcher = new ChargeBatcher(store, 0, maxCommits);
  const book = new LeaseBook(store, batcher, recalls, bookOptions(name, options));
  books.push(book);
  return { book, billing: new Billing(book), batcher };
}

async function liveKey(account: AccountRef, capCredits: number | null = null): Promise<KeyPrincipal> {
  const { id } = await gw.newKey(account, capCredits === null ? {} : { dailySpendCap: capCredits });
  return {
    kind: 'key',
    keyId: id,
    accountId: account.id,
    mode: 'live',
    allowedModels: null,
    blockedModels: null,
    budgets: { ...NO_BUDGETS, day: capCredits === null ? null : creditsToMicro(capCredits) },
  };
}

/**
 * The calls of a test admitted and not yet settled, for clients that retry a refusal "in a
 * second", once room may have come back: at the next settle, or at once when none is in flight.
 */
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

/** Resolves `all` once `count` calls have called `answered` (each its first answer, admitted or refused). */
function answersOf(count: number) {
  let n = 0;
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  return { all, answered: () => void (++n === count && done()) };
}

const db = () => gw.database.db;
const openLeases = async (accountId: string) =>
  Number((await db().one<{ n: string }>(`select count(*) as n from credit_leases where account_id = ? and closed_at is null`, [accountId]))!.n);

test('a call is paid from the lease: the balance shown moves by exactly the charge, at once', async () => {
  const acct = await gw.newAccount(100);
  const key = await liveKey(acct);
  const { billing } = instance('a');
  const hold = await billing.hold(key, creditsToMicro(2), 'svc-chat-1', 'chatcmpl-one');
  expect(await gw.balance(acct)).toBe(100); // a reservation is not a charge
  expect(await billing.settle(hold, creditsToMicro(0.75))).toBe(creditsToMicro(0.75));
  expect(await gw.balance(acct)).toBe(99.25);
  expect(await db().one(`select request_id, model, amount_micro from lease_charges where request_id = 'chatcmpl-one'`)).toMatchObject({ model: 'svc-chat-1' });
  // The lease took at most a quarter of the balance, so most of it stays free for others.
  const lease = await db().one<{ amount_micro: string }>(`select amount_micro from credit_leases where account_id = ?`, [acct.id]);
  expect(Number(lease!.amount_micro)).toBeLessThanOrEqual(creditsToMicro(25));
  await expectLedgerInvariants(db());
});

test('usage above the hold is charged: from the lease, then the balance as far as it goes, the rest recorded as uncollected', async () => {
  const acct = await gw.newAccount(4);
  const key = await liveKey(acct);
  const { billing } = instance('b');
  // The lease is a quarter of 4 credits = 1; the hold 0.5; the provider reports 6 credits of usage.
  const hold = await billing.hold(key, creditsToMicro(0.5), 'svc-chat-1', 'chatcmpl-big');
  const charged = await billing.settle(hold, creditsToMicro(6));
  expect(charged).toBe(creditsToMicro(4)); // everything the account had, and no more
  expect(await gw.balance(acct)).toBe(0);
  const uncollected = await db().one<{ amount_micro: string }>(`select amount_micro from uncollected_charges where request_id = 'chatcmpl-big'`);
  expect(Number(uncollected!.amount_micro)).toBe(creditsToMicro(2));
  await expectLedgerInvariants(db());
});

test('a failed call charges nothing; an idle lease goes back whole', async () => {
  const acct = await gw.newAccount(40);
  const key = await liveKey(acct);
  const clock = fakeClock();
  const { billing } = instance('c', { idleMs: 100, clock });
  books.at(-1)!.start();
  const hold = await billing.hold(key, creditsToMicro(1), 'svc-chat-1', 'chatcmpl-failed');
  expect(await billing.settle(hold, 0)).toBe(0);
  // Unused for idleMs: the idle pass (every idleMs here) gives it back.
  await clock.tickAsync(100);
  await pollUntil(
    () => openLeases(acct.id),
    (n) => n === 0,
    5_000,
    50,
  );
  const row = await db().one<{ balance_micro: string }>(`select balance_micro from accounts where id = ?`, [acct.id]);
  expect(Number(row!.balance_micro)).toBe(creditsToMicro(40));
  await expectLedgerInvariants(db());
});

test('the daily cap counts leases; a call past it waits on the calls in flight (429 credits_in_flight, a second), then is refused until midnight; a closed lease gives the unspent part of the day back', async () => {
  const acct = await gw.newAccount(1000);
  const key = await liveKey(acct, 10);
  const { billing, book } = instance('d');
  const holds = [];
  for (let i = 0; i < 9; i++) holds.push(await billing.hold(key, creditsToMicro(1), 'svc-chat-1', `chatcmpl-cap-${i}`));
  // The nine calls in flight hold 9 of the 10 credits: they may yet cost less, so not a 429 yet.
  const waiting = await billing.hold(key, creditsToMicro(2), 'svc-chat-1', 'chatcmpl-cap-past').catch((e) => e);
  expect(waiting).toBeInstanceOf(DomainError);
  expect(waiting).toMatchObject({ type: 'rate_limit_exceeded', code: 'credits_in_flight', retryAfterSeconds: 1 });
  for (const h of holds) await billing.settle(h, creditsToMicro(1));
  // They cost 9: the retry finds the cap spent.
  const past = await billing.hold(key, creditsToMicro(2), 'svc-chat-1', 'chatcmpl-cap-past').catch((e) => e);
  expect(past).toBeInstanceOf(DomainError);
  expect(past.type).toBe('daily_cap_exceeded');
  await book.stop();
  expect(await gw.balance(acct)).toBe(991);
  const spent = await db().one<{ spent_micro: string }>(`select spent_micro from key_daily_spend where api_key_id = ?`, [key.keyId]);
  expect(Number(spent!.spent_micro)).toBe(creditsToMicro(9));
});

test('a key whose own concurrent calls keep taking each new lease: the short refusal names the calls in progress, retryable in a second, and nothing is charged for it', async () => {
  const acct = await gw.newAccount(1000);
  const key = await liveKey(acct, 50);
  // Leases the size of one call, as a key's daily cap (or a thin balance) makes them: each take serves one waiting call.
  const { billing, book } = instance('own-race', { wantFactor: 1, minWantMicro: 1 });
  const outcomes = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      billing.hold(key, creditsToMicro(1), 'svc-chat-1', `chatcmpl-race-${i}`).then(
        (hold) => billing.settle(hold, creditsToMicro(1)).then(() => 'charged'),
        (err) => err,
      ),
    ),
  );
  const refused = outcomes.filter((o): o is DomainError => o instanceof DomainError);
  expect(refused.length).toBeGreaterThan(0);
  for (const err of refused) {
    expect([err.type, err.code, err.retryAfterSeconds]).toEqual(['rate_limit_exceeded', 'credits_in_flight', 1]);
    expect(err.message).toMatch(/calls of this account in progress/i);
  }
  const charged = outcomes.filter((o) => o === 'charged').length;
  expect(charged + refused.length).toBe(12);
  await book.stop();
  expect(await gw.balance(acct)).toBe(1000 - charged);
  await expectLedgerInvariants(db());
});
// A key's cap lowered while it holds a lease taken under no cap must not go on spending from that
// lease, and concurrent calls of a capped key must not get the 429 to midnight while the cap's
// room sits in the key's own leases.
test('a cap lowered while the key holds a lease applies to the next call: the lease taken under the old cap is not used', async () => {
  const acct = await gw.newAccount(400);
  let key = await liveKey(acct);
  const { billing, book } = instance('cap-change');
  await billing.settle(await billing.hold(key, creditsToMicro(3), 'flux-dev', 'img-cap-0'), creditsToMicro(3));
  // The lease was sized without a cap: up to a quarter of the balance.
  expect(
    Number(
      (await db().one<{ amount_micro: string }>(`select amount_micro from credit_leases where api_key_id = ? and closed_at is null`, [key.keyId]))!
        .amount_micro,
    ),
  ).toBeGreaterThan(creditsToMicro(13));
  // The owner caps the key at 13 (the key's record, fresh on every instance, carries it).
  await db().run(`update api_keys set daily_spend_cap_micro = ? where id = ?`, [creditsToMicro(13), key.keyId]);
  key = { ...key, budgets: { ...key.budgets, day: creditsToMicro(13) } };
  const outcomes: string[] = [];
  for (let i = 1; i <= 10; i++) {
    const hold = await billing.hold(key, creditsToMicro(3), 'flux-dev', `img-cap-${i}`).catch((e: DomainError) => e);
    if (hold instanceof DomainError) outcomes.push(hold.type);
    else outcomes.push(String(microToCreditsOf(await billing.settle(hold, creditsToMicro(3)))));
  }
  // 3 spent before; 3 more four times come to 15 > 13, so three more calls fit (12), then the cap.
  expect(outcomes).toEqual([
    '3',
    '3',
    '3',
    'daily_cap_exceeded',
    'daily_cap_exceeded',
    'daily_cap_exceeded',
    'daily_cap_exceeded',
    'daily_cap_exceeded',
    'daily_cap_exceeded',
    'daily_cap_exceeded',
  ]);
  await book.stop();
  const spent = await db().one<{ spent_micro: string }>(`select spent_micro from key_daily_spend where api_key_id = ?`, [key.keyId]);
  expect(Number(spent!.spent_micro)).toBe(creditsToMicro(12));
  expect(await gw.balance(acct)).toBe(388);
  await expectLedgerInvariants(db());
});

test.each([1, 2])(
  "concurrent calls of a capped key that fit its cap are all served, on %d instance(s): none gets the 429 to midnight while the key's own leases hold the room",
  async (instances) => {
    const acct = await gw.newAccount(1000);
    const key = await liveKey(acct, 30);
    const parts = Array.from({ length: instances }, (_, i) => instance(`cap-burst-${instances}-${i}`));
    const settles = new Settles();
    // Every call admitted at first stays in flight until each of the ten has had its first answer.
    const first = answersOf(10);
    const call = async (i: number) => {
      const { billing } = parts[i % instances];
      // A client that honours Retry-After: 1 tries again once room may be back (shortened here); a 429 ends it.
      for (let attempt = 0; attempt < 50; attempt++) {
        const hold = await billing.hold(key, creditsToMicro(3), 'flux-dev', `img-burst-${instances}-${i}`).catch((e: DomainError) => e);
        if (attempt === 0) first.answered();
        if (!(hold instanceof DomainError)) {
          settles.admitted();
          await first.all;
          await billing.settle(hold, creditsToMicro(3));
          settles.settled();
          return 'charged';
        }
        if (hold.code !== 'credits_in_flight' || hold.retryAfterSeconds !== 1) return hold.type;
        await settles.next();
      }
      return 'gave up';
    };
    // Ten calls of 3 credits: exactly the cap of 30.
    const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => call(i)));
    expect(outcomes).toEqual(Array(10).fill('charged'));
    for (const { book } of parts) await book.stop();
    expect(await gw.balance(acct)).toBe(970);
    // And the eleventh is past the cap: the 429 to midnight, now that no lease holds room.
    const { billing, book } = instance(`cap-burst-${instances}-after`);
    expect(await billing.hold(key, creditsToMicro(3), 'flux-dev', `img-burst-${instances}-11`).catch((e: DomainError) => e.type)).toBe('daily_cap_exceeded');
    await book.stop();
    await expectLedgerInvariants(db());
  },
);

// A capped key whose calls alternate between two instances: the cap's room may sit in the other
// instance's idle lease, which the recall brings back before the call is answered.
test("a capped key's call needing the room another instance's idle lease holds is served once that lease is recalled, not answered 402", async () => {
  const acct = await gw.newAccount(1000);
  const key = await liveKey(acct, 10);
  const a = instance('turns-a');
  const b = instance('turns-b');
  // A's call takes a lease of half the cap (5 credits) and spends 1: 4 credits of room sit idle on A.
  const first = await a.billing.hold(key, creditsToMicro(1), 'svc-chat-1', 'chatcmpl-turns-a');
  await a.billing.settle(first, creditsToMicro(1));
  expect(await openLeases(acct.id)).toBe(1);
  // B's call needs 6: the cap leaves 5 outside A's lease. A gives its lease back on the recall.
  const second = await b.billing.hold(key, creditsToMicro(6), 'flux-pro', 'img_turns_b');
  expect(await b.billing.settle(second, creditsToMicro(6))).toBe(creditsToMicro(6));
  await a.book.stop();
  await b.book.stop();
  expect(await gw.balance(acct)).toBe(993);
  await expectLedgerInvariants(db());
});

test('two instances drain one account of 10 credits with 200 concurrent calls: never more than 10, down to its last call', async () => {
  const acct = await gw.newAccount(10);
  const keys = [await liveKey(acct), await liveKey(acct)];
  const a = instance('drain-a', { idleMs: 200 });
  const b = instance('drain-b', { idleMs: 200 });
  a.book.start();
  b.book.start();
  const price = creditsToMicro(0.3);
  let answered = 0;
  const settles = new Settles();
  const call = async (i: number) => {
    const { billing } = i % 2 === 0 ? a : b;
    // A client that honours Retry-After: tries again shortly after a refusal that carries one (credits in flight).
    for (let attempt = 0; attempt < 40; attempt++) {
      try {
        const hold = await billing.hold(keys[i % 2], price, 'flux-pro', `img_drain_${i}`);
        settles.admitted();
        try {
          await billing.settle(hold, price);
        } finally {
          settles.settled();
        }
        answered++;
        return;
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        if (err.type === 'insufficient_credits') return;
        if (err.code !== 'credits_in_flight') throw err;
        await settles.next();
      }
    }
  };
  await Promise.all(Array.from({ length: 200 }, (_, i) => call(i)));
  const charged = Number((await db().one<{ s: string }>(`select coalesce(sum(amount_micro), 0) as s from lease_charges where account_id = ?`, [acct.id]))!.s);
  expect(charged).toBe(answered * price);
  expect(charged).toBeLessThanOrEqual(creditsToMicro(10));
  expect(creditsToMicro(10) - charged).toBeLessThan(price); // spent to within one call of zero
  expect(await gw.balance(acct)).toBeCloseTo(10 - charged / 1e6, 9);
  await a.book.stop();
  await b.book.stop();
  expect(await openLeases(acct.id)).toBe(0);
  await expectLedgerInvariants(db());
});

test('a lease whose instance stopped heartbeating is closed by another; what it recorded stays charged', async () => {
  const acct = await gw.newAccount(100);
  const key = await liveKey(acct);
  const dead = instance('dead');
  books.splice(books.indexOf(dead.book), 1); // it crashed: nobody stops it
  const hold = await dead.billing.hold(key, creditsToMicro(1), 'svc-chat-1', 'chatcmpl-before-crash');
  await dead.billing.settle(hold, creditsToMicro(1));
  await dead.billing.hold(key, creditsToMicro(1), 'svc-chat-1', 'chatcmpl-never-answered'); // in flight when it "crashed"
  await db().run(`update credit_leases set heartbeat_at = now() - interval '1 hour' where account_id = ?`, [acct.id]);
  const clock = fakeClock();
  const alive = instance('alive', { graceSeconds: 1, clock });
  alive.book.start();
  // Its stale-lease sweep comes every second (a third of the grace, a second at least).
  await clock.tickAsync(1_000);
  await pollUntil(
    () => openLeases(acct.id),
    (n) => n === 0,
    10_000,
    100,
  );
  expect(await gw.balance(acct)).toBe(99);
  await expectLedgerInvariants(db());
});

test('a long call keeps its lease alive by heartbeat: charged in full after several grace periods', async () => {
  const acct = await gw.newAccount(100);
  const key = await liveKey(acct);
  const clock = fakeClock();
  const instanceId = `inst_long_${Math.random().toString(36).slice(2)}`;
  const { billing, book } = instance('long', { instanceId, graceSeconds: 1, heartbeatMs: 200, clock });
  book.start();
  const sweeps = new CountedSweeps(db());
  const sweeper = instanceOn(sweeps, 'sweeper', { graceSeconds: 1, clock });
  sweeper.start();
  const hold = await billing.hold(key, creditsToMicro(2), 'svc-chat-1', 'chatcmpl-long-stream');
  // Three grace periods: each passes on the database's clock (what it heard of the lease and its
  // holder a second older) and on the books' (the holder beats, then the sweeper sweeps).
  const holderFresh = async () =>
    (await db().one<{ fresh: boolean }>(`select heartbeat_at > now() - interval '1 second' as fresh from lease_holders where instance_id = ?`, [instanceId]))
      ?.fresh === true;
  for (let period = 0; period < 3; period++) {
    await db().run(`update credit_leases set heartbeat_at = heartbeat_at - interval '1 second' where account_id = ?`, [acct.id]);
    await db().run(`update lease_holders set heartbeat_at = heartbeat_at - interval '1 second' where instance_id = ?`, [instanceId]);
    await clock.tickAsync(200);
    await pollUntil(holderFresh, (fresh) => fresh, 5_000, 10);
    const swept = sweeps.done;
    await clock.tickAsync(800);
    await pollUntil(
      async () => sweeps.done,
      (n) => n > swept,
      5_000,
      10,
    );
  }
  expect(await openLeases(acct.id)).toBe(1);
  expect(await billing.settle(hold, creditsToMicro(1.5))).toBe(creditsToMicro(1.5));
  expect(await gw.balance(acct)).toBe(98.5);
});

test('four charge transactions in flight: calls sharing leases, some above their hold, each charged once', async () => {
  const acct = await gw.newAccount(1000);
  const keys = await Promise.all([liveKey(acct), liveKey(acct), liveKey(acct)]);
  const { billing, batcher } = instance('concurrent', {}, 4);
  const before = { ...batcher.stats };
  const charged = await Promise.all(
    Array.from({ length: 150 }, async (_, i) => {
      const hold = await billing.hold(keys[i % 3], creditsToMicro(0.02), 'svc-chat-1', `chatcmpl-conc-${i}`);
      // Every fifth call reports usage above its hold: the excess is debited from the account row.
      return billing.settle(hold, creditsToMicro(i % 5 === 0 ? 0.05 : 0.01));
    }),
  );
  const expected = Array.from({ length: 150 }, (_, i) => creditsToMicro(i % 5 === 0 ? 0.05 : 0.01));
  expect(charged).toEqual(expected);
  expect(batcher.stats.charges - before.charges).toBe(150);
  const total = expected.reduce((a, b) => a + b, 0);
  const recorded = await db().one<{ n: string; lease: string }>(
    `select count(*) as n, coalesce(sum(amount_micro), 0) as lease from lease_charges where request_id like 'chatcmpl-conc-%'`,
  );
  expect(Number(recorded!.n)).toBe(150);
  // The balance shown counts unspent leased credits: it has moved by exactly the charges.
  expect(await gw.balance(acct)).toBeCloseTo(1000 - total / 1e6, 9);
});

test('group commit: concurrent charges share transactions', async () => {
  const acct = await gw.newAccount(1000);
  const key = await liveKey(acct);
  const { billing, batcher } = instance('batch');
  const before = { ...batcher.stats };
  await Promise.all(
    Array.from({ length: 64 }, async (_, i) => {
      const hold = await billing.hold(key, creditsToMicro(0.01), 'svc-chat-1', `chatcmpl-batch-${i}`);
      await billing.settle(hold, creditsToMicro(0.01));
    }),
  );
  expect(batcher.stats.charges - before.charges).toBe(64);
  expect(batcher.stats.commits - before.commits).toBeLessThan(64 / 4);
  expect(await gw.balance(acct)).toBeCloseTo(1000 - 0.64, 9);
});

/** A lease store whose next closes fail as the database would: `failures` of them, with `code`. */
class FailingCloses extends SqlLeaseStore {
  failures = 0;
  code: string | undefined;
  closeCalls = 0;
  override close(leaseId: string) {
    this.closeCalls++;
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(Object.assign(new Error('close failed'), { code: this.code }));
    }
    return super.close(leaseId);
  }
}

/** A lease store counting the stale-lease sweeps that have run to their end. */
class CountedSweeps extends SqlLeaseStore {
  done = 0;
  override async forgetSilentHolders(graceSeconds: number) {
    try {
      return await super.forgetSilentHolders(graceSeconds);
    } finally {
      this.done++;
    }
  }
}

function instanceOn(store: LeaseStore, name: string, options: Partial<LeaseBookOptions> = {}): LeaseBook {
  const book = new LeaseBook(store, new ChargeBatcher(store, 0, 1), recalls, bookOptions(name, options));
  books.push(book);
  return book;
}

test('a lease close the database aborted for a deadlock is tried again: the lease goes back at once', async () => {
  const acct = await gw.newAccount(50);
  const key = await liveKey(acct);
  const store = Object.assign(new FailingCloses(db()), { failures: 2, code: '40P01' });
  const billing = new Billing(instanceOn(store, 'deadlock'));
  const hold = await billing.hold(key, creditsToMicro(1), 'svc-chat-1', 'chatcmpl-close-deadlock');
  await billing.settle(hold, creditsToMicro(1));
  await books.at(-1)!.returnIdleNow();
  expect(store.closeCalls).toBe(3);
  expect(await openLeases(acct.id)).toBe(0);
  expect(await gw.balance(acct)).toBe(49);
  await expectLedgerInvariants(db());
});

test('a lease whose close failed (the database away) is closed by the next return of idle leases, not left open', async () => {
  const acct = await gw.newAccount(50);
  const key = await liveKey(acct);
  const store = Object.assign(new FailingCloses(db()), { failures: 1, code: '08006' });
  const book = instanceOn(store, 'close-failed');
  const billing = new Billing(book);
  const hold = await billing.hold(key, creditsToMicro(1), 'svc-chat-1', 'chatcmpl-close-failed');
  await billing.settle(hold, creditsToMicro(2));
  await book.returnIdleNow(); // its close fails: the database went away
  expect(await openLeases(acct.id)).toBe(1);
  await book.returnIdleNow(); // the database is back
  expect(await openLeases(acct.id)).toBe(0);
  expect(await gw.balance(acct)).toBe(48);
  await expectLedgerInvariants(db());
});

/** A lease store whose next charge batches fail as an unreachable database's would. */
class FailingRecords extends SqlLeaseStore {
  failures = 0;
  override record(rows: Parameters<LeaseStore['record']>[0]) {
    if (this.failures > 0) {
      this.failures--;
      return Promise.reject(Object.assign(new Error('connection terminated'), { code: '08006' }));
    }
    return super.record(rows);
  }
}

/**
 * An account of 50 credits whose stream (request `requestId`) has its `stream_starts` row written
 * with a running estimate of 0.9 credits, reports 0.5 of usage, and has that charge dropped by the
 * database: kept in the journal, answered from the lease. The row is written at once and never
 * brought up to date or deleted by a tick, as when the database dropped the connection the delete
 * would have gone on.
 */
async function streamChargedIntoTheJournal(requestId: string) {
  const acct = await gw.newAccount(50);
  const key = await liveKey(acct);
  const store = Object.assign(new FailingRecords(db()), { failures: 1 });
  const book = instanceOn(store, requestId);
  const streams = new StreamStarts(store, { writeAfterMs: 0, updateEveryMs: 3_600_000 });
  const billing = new Billing(book, streams);
  const hold = await billing.hold(key, creditsToMicro(1), 'svc-chat-1', requestId);
  billing.streaming(hold, () => creditsToMicro(0.9)); // the running estimate: prompt and what was relayed
  await streams.tick();
  expect(await db().all(`select request_id from stream_starts where request_id = ?`, [requestId])).toHaveLength(1);
  expect(await billing.settle(hold, creditsToMicro(0.5))).toBe(creditsToMicro(0.5));
  return { acct, book, streams };
}

test("a stream whose charge waits in the journal keeps its lease open until it is recorded: it is charged its usage, not the estimate the lease's close would charge it", async () => {
  const { acct, book, streams } = await streamChargedIntoTheJournal('chatcmpl-journaled-stream');
  await book.returnIdleNow();
  expect(await openLeases(acct.id)).toBe(1); // not closed over a charge it has not recorded
  await book.recordKeptNow();
  await book.returnIdleNow();
  expect(await openLeases(acct.id)).toBe(0);
  const charge = await db().one<{ amount_micro: string }>(`select amount_micro from lease_charges where request_id = 'chatcmpl-journaled-stream'`);
  expect(Number(charge!.amount_micro)).toBe(creditsToMicro(0.5));
  expect(await gw.balance(acct)).toBe(49.5);
  expect(await db().all(`select request_id from stream_starts where request_id = 'chatcmpl-journaled-stream'`)).toEqual([]);
  streams.stop();
  await expectLedgerInvariants(db());
});

test('a stream charged its estimate by a close from elsewhere, whose usage is recorded later and comes to less: the difference goes back, once', async () => {
  const { acct, book, streams } = await streamChargedIntoTheJournal('chatcmpl-closed-elsewhere');

  // Another instance closes the lease (as after this one stopped heartbeating): the stream is charged its estimate.
  const [lease] = await db().all<{ id: string }>(`select id from credit_leases where account_id = ? and closed_at is null`, [acct.id]);
  await new SqlLeaseStore(db()).close(lease.id);
  expect(await gw.balance(acct)).toBeCloseTo(49.1, 9);

  // The journal is recorded: the call is charged its usage, the estimate's excess given back.
  await book.recordKeptNow();
  await book.recordKeptNow();
  expect(await gw.balance(acct)).toBeCloseTo(49.5, 9);
  const refunds = await db().all<{ amount_micro: string }>(
    `select amount_micro from ledger_entries where kind = 'refund' and reference = 'chatcmpl-closed-elsewhere'`,
  );
  expect(refunds.map((r) => Number(r.amount_micro))).toEqual([creditsToMicro(0.4)]);
  streams.stop();
  await expectLedgerInvariants(db());
});

test('two capped keys, 40 concurrent calls on two instances: the caps hold exactly, and every refusal names its true reason (never a 402 while the balance covers the call)', async () => {
  const acct = await gw.newAccount(100);
  const keys = [await liveKey(acct, 3), await liveKey(acct, 2)];
  const parts = [instance('reason-a'), instance('reason-b')];
  const refusals: string[] = [];
  // Two waves of 20 concurrent calls: a call admitted stays in flight until every call of its
  // wave has been answered (so the others meet its lease), and the second wave comes once the
  // first has settled (so it meets the charges committed).
  const call = async (i: number, wave: ReturnType<typeof answersOf>) => {
    const { billing } = parts[i % 2];
    const key = keys[Math.floor(i / 2) % 2];
    const hold = await billing.hold(key, creditsToMicro(1), 'svc-creative-v8', `img_reason_${i}`).catch((e: DomainError) => e);
    wave.answered();
    if (hold instanceof DomainError) {
      refusals.push(`${hold.status} ${hold.code ?? hold.type} ${hold.retryAfterSeconds === 1 ? 1 : 'midnight'}`);
      return 'refused';
    }
    await wave.all;
    await billing.settle(hold, creditsToMicro(1));
    return 'charged';
  };
  const outcomes: string[] = [];
  for (const from of [0, 20]) {
    const wave = answersOf(20);
    outcomes.push(...(await Promise.all(Array.from({ length: 20 }, (_, j) => call(from + j, wave)))));
  }
  const charged = outcomes.filter((o) => o === 'charged').length;
  expect(charged).toBeLessThanOrEqual(5);
  // A cap spent by committed charges (to midnight), or its room held by calls in progress (a second): nothing else.
  for (const refusal of refusals) expect(['429 daily_cap_exceeded midnight', '429 credits_in_flight 1']).toContain(refusal);
  expect(refusals.filter((r) => r.includes('daily_cap_exceeded')).length).toBeGreaterThan(0);
  for (const { book } of parts) await book.stop();
  expect(await gw.balance(acct)).toBe(100 - charged);
  // Settled: a client that retried the short ones fills each cap exactly, then meets the cap itself.
  const after = instance('reason-after');
  for (const [k, key] of keys.entries()) {
    for (;;) {
      const hold = await after.billing.hold(key, creditsToMicro(1), 'svc-creative-v8', `img_reason_after_${k}_${Math.random()}`).catch((e: DomainError) => e);
      if (hold instanceof DomainError) {
        expect([hold.status, hold.type]).toEqual([429, 'daily_cap_exceeded']);
        break;
      }
      await after.billing.settle(hold, creditsToMicro(1));
    }
  }
  await after.book.stop();
  expect(await gw.balance(acct)).toBe(95);
  await expectLedgerInvariants(db());
});
