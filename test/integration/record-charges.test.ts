/**
 * svc_record_charges, the one place a batch of call charges becomes money, on a real database
 * (PGlite, or PostgreSQL in CI's second pass). Most batches take its set-wise pass; what that
 * pass cannot decide goes through its row walk. Each test builds batches that need one or the
 * other, or both at once, and checks what an operator would: each call's outcome, the lease's
 * spent amount, the charge rows, the balance and the uncollected entries.
 */
import { NO_BUDGETS } from '../../src/domain/credits/budgets';
import { startTestServices, type AccountRef, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { pollUntil } from '../support/poll';
import { uniqueId } from '../support/unique-id';
import type { ChargeOutcome, ChargeRow } from '../../src/domain/credits/lease-store';
import { takeLease } from '../../src/domain/credits/lease-take';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { creditsToMicro } from '../../src/domain/shared/money';
import type { SqlExecutor } from '../../src/domain/ports/database';

let gw: TestServices;
let store: SqlLeaseStore;
beforeAll(async () => {
  gw = await startTestServices();
  store = new SqlLeaseStore(gw.database.db);
});
afterAll(async () => {
  try {
    await expectLedgerInvariants(gw.database.db);
  } finally {
    await gw.close();
  }
});

const db = () => gw.database.db;
/** Statements of this database waiting for a lock, seen from `tx` (PostgreSQL: each connection its own backend). */
const lockWaiters = async (tx: SqlExecutor) =>
  Number((await tx.one<{ n: string }>(`select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`))!.n);

/** An account with `credits`, a live key, and `leases` leases of `leaseMicro` each. */
async function setUp(credits: number, leases: number, leaseMicro: number) {
  const account: AccountRef = await gw.newAccount(credits);
  const { id: keyId } = await gw.newKey(account);
  const ids: string[] = [];
  for (let i = 0; i < leases; i++) {
    const id = uniqueId('lease');
    const grant = await takeLease(store, {
      id,
      accountId: account.id,
      keyId,
      budgets: NO_BUDGETS,
      minMicro: leaseMicro,
      wantMicro: leaseMicro,
      instanceId: 'inst_record_test',
      now: new Date(),
    });
    expect(grant.amountMicro).toBe(leaseMicro);
    ids.push(id);
  }
  const row = (leaseId: string, leaseMicro: number, excessMicro = 0, requestId = uniqueId('chatcmpl')): ChargeRow => ({
    requestId,
    leaseId,
    accountId: account.id,
    keyId,
    model: 'svc-chat-1',
    leaseMicro,
    excessMicro,
  });
  return { account, keyId, leases: ids, row };
}

/** What a lease has spent: the sum of its charges (its row carries it only once closed). */
const spent = async (leaseId: string) =>
  Number((await db().one<{ s: string }>(`select coalesce(sum(amount_micro), 0) as s from lease_charges where lease_id = ?`, [leaseId]))!.s);
const chargeRows = async (ids: string[]) =>
  new Map(
    (
      await db().all<{ request_id: string; amount_micro: string }>(
        `select request_id, amount_micro from lease_charges where request_id in (${ids.map(() => '?').join(',')})`,
        ids,
      )
    ).map((r) => [r.request_id, Number(r.amount_micro)]),
  );
const byId = (outcomes: ChargeOutcome[]) => new Map(outcomes.map((o) => [o.requestId, [o.status, o.chargedMicro]]));

test('a batch over several leases that all fit: every call charged its amount, each lease by its own calls', async () => {
  const { leases, row } = await setUp(100, 3, 1_000_000);
  const rows = [row(leases[0], 100), row(leases[1], 250), row(leases[0], 300), row(leases[2], 1), row(leases[1], 49)];
  const outcomes = await store.record(rows);
  expect(outcomes).toHaveLength(5);
  expect(byId(outcomes)).toEqual(new Map(rows.map((r) => [r.requestId, [0, r.leaseMicro]])));
  expect([await spent(leases[0]), await spent(leases[1]), await spent(leases[2])]).toEqual([400, 299, 1]);
  expect(await chargeRows(rows.map((r) => r.requestId))).toEqual(new Map(rows.map((r) => [r.requestId, r.leaseMicro])));
});

test('the same batch recorded twice (a retry) charges nothing the second time', async () => {
  const { leases, row } = await setUp(100, 2, 1_000_000);
  const rows = [row(leases[0], 10), row(leases[1], 20), row(leases[1], 30)];
  await store.record(rows);
  const again = await store.record(rows);
  expect(byId(again)).toEqual(new Map(rows.map((r) => [r.requestId, [0, 0]])));
  expect([await spent(leases[0]), await spent(leases[1])]).toEqual([10, 50]);
  // A batch mixing charges already recorded with new ones: only the new ones count.
  const fresh = row(leases[0], 5);
  expect(byId(await store.record([rows[0], fresh]))).toEqual(
    new Map([
      [rows[0].requestId, [0, 0]],
      [fresh.requestId, [0, 5]],
    ]),
  );
  expect(await spent(leases[0])).toBe(15);
});

test('one call twice in one batch is charged once', async () => {
  const { leases, row } = await setUp(100, 1, 1_000_000);
  const twice = row(leases[0], 70);
  const other = row(leases[0], 5);
  const outcomes = await store.record([twice, other, { ...twice }]);
  expect(
    outcomes
      .filter((o) => o.requestId === twice.requestId)
      .map((o) => o.chargedMicro)
      .sort(),
  ).toEqual([0, 70]);
  expect(await spent(leases[0])).toBe(75);
  expect(await chargeRows([twice.requestId, other.requestId])).toEqual(
    new Map([
      [twice.requestId, 70],
      [other.requestId, 5],
    ]),
  );
});

test('charges past what their lease holds (the lease book never sends them) are recorded; its close gives nothing back and shows the overrun as uncollected', async () => {
  const { account, leases, row } = await setUp(100, 2, 100);
  const before = await gw.balance(account);
  // Lease 0 has 100 and is sent 130; lease 1 is sent exactly its 100, in the same batch.
  const over = [row(leases[0], 60), row(leases[0], 30), row(leases[0], 30), row(leases[0], 10)];
  const e = row(leases[1], 100);
  const outcomes = byId(await store.record([...over, e]));
  expect(outcomes).toEqual(new Map([...over, e].map((r) => [r.requestId, [0, r.leaseMicro]])));
  expect([await spent(leases[0]), await spent(leases[1])]).toEqual([130, 100]);
  // Closed, the overdrawn lease returns nothing, and the 30 it was not given is the operator's to see.
  expect(await store.close(leases[0])).toBe(0);
  const overrun = await db().all<{ amount_micro: string; reason: string }>(`select amount_micro, reason from uncollected_charges where request_id = ?`, [
    leases[0],
  ]);
  expect(overrun.map((u) => [Number(u.amount_micro), u.reason])).toEqual([[30, 'lease_overrun']]);
  expect(await ledgerCharges(over[2].requestId)).toEqual([]);
  // The balance never paid more than the two leases: 200 gone, lease 1 open and fully spent.
  expect(await gw.balance(account)).toBeCloseTo(before - 200 / 1e6, 9);
});

const ledgerCharges = async (requestId: string) =>
  (await db().all<{ amount_micro: string }>(`select amount_micro from ledger_entries where kind = 'charge' and reference = ?`, [requestId])).map((r) =>
    Number(r.amount_micro),
  );

test('a charge that reaches its lease after it closed (a late charge, replayed after an outage) is paid from the balance, once', async () => {
  const { account, leases, row } = await setUp(100, 2, 1_000_000);
  await store.close(leases[0]);
  const afterClose = await gw.balance(account);
  const late = row(leases[0], 10, 5);
  const charged = row(leases[1], 10);
  expect(byId(await store.record([late, charged]))).toEqual(
    new Map([
      [late.requestId, [0, 15]],
      [charged.requestId, [0, 10]],
    ]),
  );
  expect(await spent(leases[0])).toBe(0);
  expect(await ledgerCharges(late.requestId)).toEqual([-15]);
  // Replayed again (the journal could not tell it was recorded): nothing more.
  expect(byId(await store.record([late]))).toEqual(new Map([[late.requestId, [0, 0]]]));
  expect(await ledgerCharges(late.requestId)).toEqual([-15]);
  expect(await gw.balance(account)).toBeCloseTo(afterClose - 25 / 1e6, 9);
  await expectLedgerInvariants(db());
});

test('a lone plain charge (a quiet gateway sends one at a time): once on its open lease, nothing again when retried, from the balance once its lease closed, refused on a lease of another account', async () => {
  const { account, leases, row } = await setUp(100, 2, 1_000_000);
  const other = await setUp(100, 1, 1_000_000);
  const before = await gw.balance(account);
  const first = row(leases[0], 40);
  expect(await store.record([first])).toEqual([{ requestId: first.requestId, status: 0, chargedMicro: 40 }]);
  expect(await store.record([first])).toEqual([{ requestId: first.requestId, status: 0, chargedMicro: 0 }]);
  expect(await spent(leases[0])).toBe(40);
  await store.close(leases[1]);
  const late = row(leases[1], 25);
  expect(await store.record([late])).toEqual([{ requestId: late.requestId, status: 0, chargedMicro: 25 }]);
  expect(await ledgerCharges(late.requestId)).toEqual([-25]);
  const stray = { ...row(other.leases[0], 30), accountId: account.id };
  expect(await store.record([stray])).toEqual([{ requestId: stray.requestId, status: 1, chargedMicro: 0 }]);
  expect(await chargeRows([stray.requestId])).toEqual(new Map());
  expect(await gw.balance(account)).toBeCloseTo(before - 65 / 1e6, 9);
  await expectLedgerInvariants(db());
});

test('a charge on a lease the database never had (its take, not yet flushed, lost in a crash) is paid from the balance, once, and answered status 2; short of balance, the rest is uncollected', async () => {
  const { account, leases, row } = await setUp(100, 1, 1_000_000);
  const before = await gw.balance(account);
  // From the database's side a take lost in a crash left nothing: the lease id is one it never saw.
  const lost = uniqueId('lease');
  const alone = row(lost, 40);
  const batched = row(lost, 10, 5);
  const held = row(leases[0], 7);
  expect(await store.record([alone])).toEqual([{ requestId: alone.requestId, status: 2, chargedMicro: 40 }]);
  expect(byId(await store.record([batched, held]))).toEqual(
    new Map([
      [batched.requestId, [2, 15]],
      [held.requestId, [0, 7]],
    ]),
  );
  expect([await ledgerCharges(alone.requestId), await ledgerCharges(batched.requestId)]).toEqual([[-40], [-15]]);
  expect(await chargeRows([alone.requestId, batched.requestId])).toEqual(new Map());
  // Replayed (the journal could not tell it was recorded): nothing more.
  expect(byId(await store.record([alone, batched]))).toEqual(
    new Map([
      [alone.requestId, [2, 0]],
      [batched.requestId, [2, 0]],
    ]),
  );
  expect(await store.recordedCharge(alone.requestId)).toBe(40);
  // The balance shown counts the open lease's unspent credits as the account's: 55 from the balance, 7 from the lease.
  expect(await gw.balance(account)).toBeCloseTo(before - 62 / 1e6, 9);
  await expectLedgerInvariants(db());

  // An account with less than the call cost: what the balance holds is charged, the rest is the operator's.
  const poor = await setUp(0.00003, 0, 1);
  const short = poor.row(uniqueId('lease'), 50);
  expect(await store.record([short])).toEqual([{ requestId: short.requestId, status: 2, chargedMicro: 30 }]);
  const uncollected = await db().all<{ amount_micro: string }>(`select amount_micro from uncollected_charges where request_id = ?`, [short.requestId]);
  expect(uncollected.map((u) => Number(u.amount_micro))).toEqual([20]);
  expect(byId(await store.record([short]))).toEqual(new Map([[short.requestId, [2, 0]]]));
  expect(await gw.balance(poor.account)).toBe(0);
  await expectLedgerInvariants(db());
});

test('a close racing the charges of its lease counts every one that reached the lease, and the rest are paid from the balance: each exactly once', async () => {
  const { account, leases, row } = await setUp(100, 1, creditsToMicro(10));
  const before = await gw.balance(account);
  const rows = Array.from({ length: 40 }, () => row(leases[0], 1_000));
  // Each batch its own statement (its own connection on PostgreSQL). The close counts the
  // lease's charges, then stays uncommitted until the second half of the charges have arrived
  // and wait on it: a charge that read the lease as open then, and did not wait for the close,
  // would be recorded on the lease after its count (the call free, the lease's rest back in the
  // balance). On PGlite, one connection, they queue behind the close's transaction.
  const first = rows.slice(0, 20).map((r) => store.record([r]));
  let second: Promise<ChargeOutcome[]>[] = [];
  await db().transaction(async (tx) => {
    await tx.one(`select svc_close_lease(?) as back`, [leases[0]]);
    // In pairs (the function's set-wise pass) and alone (the one-statement path): both must
    // wait. The pairs go first, so they have connections of the pool while the close is open.
    const late = rows.slice(20);
    second = [...[0, 2, 4, 6, 8].map((i) => store.record(late.slice(i, i + 2))), ...late.slice(10).map((r) => store.record([r]))];
    if (db().dialect === 'postgresql')
      await pollUntil(
        () => lockWaiters(tx),
        (n) => n > 0,
        10_000,
        10,
      );
  });
  const outcomes = (await Promise.all([...first, ...second])).flat();
  expect(outcomes.every((o) => o.status === 0 && o.chargedMicro === 1_000)).toBe(true);
  const fromLease = await spent(leases[0]);
  const fromBalance = (await Promise.all(rows.map((r) => ledgerCharges(r.requestId)))).flat();
  expect(fromLease + -fromBalance.reduce((a, b) => a + b, 0)).toBe(40 * 1_000);
  expect(fromLease % 1_000 === 0 && fromBalance.every((c) => c === -1_000)).toBe(true);
  // The lease is closed: the balance moved by exactly what the 40 calls cost.
  expect(await gw.balance(account)).toBeCloseTo(before - 40_000 / 1e6, 9);
  await expectLedgerInvariants(db());
});

const onPostgres = process.env.DATABASE_URL ? test : test.skip;
onPostgres('the heartbeat does not wait for a charge batch in flight (PostgreSQL: their own connections)', async () => {
  const { leases, row } = await setUp(100, 2, 1_000_000);
  await db().transaction(async (tx) => {
    // A batch recorded, its transaction not yet committed: both its leases locked by it.
    await new SqlLeaseStore(db(), tx).record([row(leases[0], 10), row(leases[1], 5)]);
    // Either the beat is answered, or it is seen waiting for a lock (the batch's, held until this transaction ends).
    let beaten = false;
    const beat = store.heartbeat('inst_record_test').then(() => (beaten = true));
    const outcome = await pollUntil(
      async () => (beaten ? 'beaten' : (await lockWaiters(tx)) > 0 ? 'waited' : null),
      (o) => o !== null,
      10_000,
      10,
    );
    expect(outcome).toBe('beaten');
    await beat;
  });
  await expectLedgerInvariants(db());
});

/** Makes `holder` the holder of `leaseIds`, as if it had taken them an hour ago. */
const takenAnHourAgoBy = (holder: string, leaseIds: string[]) =>
  db().run(`update credit_leases set instance_id = ?, heartbeat_at = now() - interval '1 hour' where id = any(?::text[])`, [holder, leaseIds]);

test("one beat of its holder keeps every lease alive, however long ago it was taken; a holder's silence makes them stale, and so does none ever heard", async () => {
  const instance = uniqueId('inst');
  const taken = async (holder: string) => {
    const { leases } = await setUp(100, 2, 1_000);
    await takenAnHourAgoBy(holder, leases);
    return leases;
  };
  const beating = await taken(instance);
  const silent = await taken(uniqueId('inst'));
  const staleOf = async (ids: string[]) => (await store.stale(60)).filter((id) => ids.includes(id)).sort();
  await store.heartbeat(instance);
  expect(await staleOf([...beating, ...silent])).toEqual([...silent].sort());
  // Its holder beat an hour ago and not since: its leases are stale too.
  await db().run(`update lease_holders set heartbeat_at = now() - interval '1 hour' where instance_id = ?`, [instance]);
  expect(await staleOf(beating)).toEqual([...beating].sort());
  for (const id of [...beating, ...silent]) await store.close(id);
  await expectLedgerInvariants(db());
});

test('holders silent past the grace are forgotten (the stale sweep does it), and no lease changes fate for it', async () => {
  const [quiet, live] = [uniqueId('inst'), uniqueId('inst')];
  const { leases } = await setUp(100, 2, 1_000);
  // One lease of each holder, both taken an hour ago: only the live holder's beat keeps its lease.
  await takenAnHourAgoBy(quiet, [leases[0]]);
  await takenAnHourAgoBy(live, [leases[1]]);
  await store.heartbeat(quiet);
  await store.heartbeat(live);
  await db().run(`update lease_holders set heartbeat_at = now() - interval '2 minutes' where instance_id = ?`, [quiet]);
  const holders = async () =>
    (await db().all<{ instance_id: string }>(`select instance_id from lease_holders where instance_id in (?, ?) order by 1`, [quiet, live])).map(
      (r) => r.instance_id,
    );
  const staleOf = async () => (await store.stale(60)).filter((id) => leases.includes(id));

  expect(await staleOf()).toEqual([leases[0]]);
  expect(await store.forgetSilentHolders(60)).toBeGreaterThanOrEqual(1);
  expect(await holders()).toEqual([live]);
  expect(await staleOf()).toEqual([leases[0]]);
  // A forgotten holder that beats again is a holder again, and its lease is alive again.
  await store.heartbeat(quiet);
  expect(await holders()).toEqual([quiet, live].sort());
  expect(await staleOf()).toEqual([]);
  for (const id of leases) await store.close(id);
  await expectLedgerInvariants(db());
});

test("a late charge counts on its key's day, as the lease it came too late for did", async () => {
  const { keyId, leases, row } = await setUp(100, 1, 1_000_000);
  const daySpend = async () => Number((await db().one<{ s: string }>(`select spent_micro as s from key_daily_spend where api_key_id = ?`, [keyId]))!.s);
  expect(await daySpend()).toBe(1_000_000);
  await store.close(leases[0]);
  expect(await daySpend()).toBe(0);
  await store.record([row(leases[0], 10, 5)]);
  expect(await daySpend()).toBe(15);
});

test('a late charge above what the balance holds takes the balance to zero and records the rest as uncollected', async () => {
  const { account, leases, row } = await setUp(1, 1, creditsToMicro(0.25));
  await store.close(leases[0]);
  const late = row(leases[0], creditsToMicro(0.25), creditsToMicro(1));
  expect(byId(await store.record([late]))).toEqual(new Map([[late.requestId, [0, creditsToMicro(1)]]]));
  expect(await gw.balance(account)).toBe(0);
  const uncollected = await db().one<{ amount_micro: string }>(`select amount_micro from uncollected_charges where request_id = ?`, [late.requestId]);
  expect(Number(uncollected!.amount_micro)).toBe(creditsToMicro(0.25));
});

test('a charge naming a lease of another account is refused and writes nothing', async () => {
  const { leases, row } = await setUp(100, 1, 1_000_000);
  const other = await setUp(100, 1, 1_000_000);
  const foreign = row(other.leases[0], 10);
  const alsoForeign = row(other.leases[0], 10, 5);
  expect(byId(await store.record([foreign, alsoForeign]))).toEqual(
    new Map([
      [foreign.requestId, [1, 0]],
      [alsoForeign.requestId, [1, 0]],
    ]),
  );
  expect((await chargeRows([foreign.requestId, alsoForeign.requestId])).size).toBe(0);
  expect([await ledgerCharges(foreign.requestId), await ledgerCharges(alsoForeign.requestId)]).toEqual([[], []]);
  expect(await spent(other.leases[0])).toBe(0);
  expect(leases).toHaveLength(1);
});

test('usage above the lease: the excess from the balance as far as it goes, the rest uncollected, alongside ordinary calls', async () => {
  const { account, leases, row } = await setUp(3, 1, creditsToMicro(1));
  const plain = row(leases[0], creditsToMicro(0.5));
  // 0.5 more from the lease, then 4 credits above it: the balance has 2 left, so 2 uncollected.
  const big = row(leases[0], creditsToMicro(0.5), creditsToMicro(4));
  const outcomes = byId(await store.record([plain, big]));
  expect(outcomes).toEqual(
    new Map([
      [plain.requestId, [0, creditsToMicro(0.5)]],
      [big.requestId, [0, creditsToMicro(2.5)]],
    ]),
  );
  expect(await gw.balance(account)).toBe(0);
  const uncollected = await db().one<{ amount_micro: string }>(`select amount_micro from uncollected_charges where request_id = ?`, [big.requestId]);
  expect(Number(uncollected!.amount_micro)).toBe(creditsToMicro(2));
  expect(await spent(leases[0])).toBe(creditsToMicro(1));
  await expectLedgerInvariants(db());
});

test("usage above the lease stops at the key's daily cap, however many calls are charged together: the rest is uncollected, for the cap", async () => {
  const account: AccountRef = await gw.newAccount(100);
  const { id: keyId } = await gw.newKey(account, { dailySpendCap: 5 });
  // Two leases of 2 credits (two instances' each): 4 of the 5-credit cap taken.
  const leases = await Promise.all(
    [0, 1].map(async () => {
      const id = uniqueId('lease');
      await takeLease(store, {
        id,
        accountId: account.id,
        keyId,
        budgets: { ...NO_BUDGETS, day: creditsToMicro(5) },
        minMicro: creditsToMicro(2),
        wantMicro: creditsToMicro(2),
        instanceId: 'inst_cap_test',
        now: new Date(),
      });
      return id;
    }),
  );
  const before = await gw.balance(account);
  // Each lease's calls come back at 3 credits above it: 6 credits of excess on 1 credit of cap left.
  const rows: ChargeRow[] = leases.flatMap((leaseId) =>
    [0, 1].map(() => ({
      requestId: uniqueId('chatcmpl'),
      leaseId,
      accountId: account.id,
      keyId,
      model: 'svc-chat-1',
      leaseMicro: creditsToMicro(1),
      excessMicro: creditsToMicro(1.5),
    })),
  );
  // The two instances' batches at once.
  const outcomes = (await Promise.all([store.record(rows.slice(0, 2)), store.record(rows.slice(2))])).flat();
  const charged = outcomes.reduce((sum, o) => sum + o.chargedMicro, 0);
  expect(charged).toBe(creditsToMicro(5));
  const daySpend = Number(
    (await db().one<{ s: string }>(`select spent_micro as s from key_daily_spend where api_key_id = ? and day = (now() at time zone 'UTC')::date`, [keyId]))!.s,
  );
  expect(daySpend).toBe(creditsToMicro(5));
  const uncollected = await db().all<{ amount_micro: string; reason: string }>(
    `select amount_micro, reason from uncollected_charges where request_id in (${rows.map(() => '?').join(',')})`,
    rows.map((r) => r.requestId),
  );
  expect(uncollected.reduce((sum, u) => sum + Number(u.amount_micro), 0)).toBe(creditsToMicro(5));
  expect(new Set(uncollected.map((u) => u.reason))).toEqual(new Set(['daily_cap']));
  // The leases' 4 credits and the one credit of cap left went; nothing more (a lease's unspent part counts in the balance shown).
  for (const id of leases) await store.close(id);
  expect(await gw.balance(account)).toBeCloseTo(before - 5, 9);
  await expectLedgerInvariants(db());
});

test('a charge kept in the journal (answered while the database was away) carries what it cost beyond its lease as waived: uncollected, never debited', async () => {
  const { account, keyId, leases, row } = await setUp(10, 1, creditsToMicro(1));
  const before = await gw.balance(account);
  const kept: ChargeRow = { ...row(leases[0], creditsToMicro(0.4)), waivedMicro: creditsToMicro(2) };
  expect(byId(await store.record([kept]))).toEqual(new Map([[kept.requestId, [0, creditsToMicro(0.4)]]]));
  const uncollected = await db().one<{ amount_micro: string; reason: string; api_key_id: string }>(
    `select amount_micro, reason, api_key_id from uncollected_charges where request_id = ?`,
    [kept.requestId],
  );
  expect(uncollected).toMatchObject({ reason: 'database_unavailable', api_key_id: keyId });
  expect(Number(uncollected!.amount_micro)).toBe(creditsToMicro(2));
  // Replayed again: nothing more charged, nothing more waived.
  expect(byId(await store.record([kept]))).toEqual(new Map([[kept.requestId, [0, 0]]]));
  await store.close(leases[0]);
  expect(await gw.balance(account)).toBeCloseTo(before - 0.4, 9);
  // In a batch with others (the set-wise pass leaves it to the row walk), and after its lease closed (a late charge).
  const again = await setUp(10, 1, creditsToMicro(1));
  await store.close(again.leases[0]);
  const late: ChargeRow = { ...again.row(again.leases[0], creditsToMicro(0.3)), waivedMicro: creditsToMicro(1) };
  const plain = again.row(again.leases[0], creditsToMicro(0.1));
  expect(byId(await store.record([late, plain]))).toEqual(
    new Map([
      [late.requestId, [0, creditsToMicro(0.3)]],
      [plain.requestId, [0, creditsToMicro(0.1)]],
    ]),
  );
  const lateWaived = await db().one<{ amount_micro: string }>(`select amount_micro from uncollected_charges where request_id = ?`, [late.requestId]);
  expect(Number(lateWaived!.amount_micro)).toBe(creditsToMicro(1));
  await expectLedgerInvariants(db());
});
