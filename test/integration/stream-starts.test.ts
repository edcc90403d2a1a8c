/**
 * Streams cut by their instance's death, on a real database (PGlite, or PostgreSQL in CI's second
 * pass): a lease closed with a stream that never settled charges that stream its prompt, once;
 * a stream settled before the close is not charged again; a stream whose real charge arrives
 * after the close (its instance had only lost the database) is charged the rest of its cost from
 * the balance, once. StreamStarts writes only streams that outlive its delay, and keeps what they
 * owe (their prompt and what they relayed) up to date, on a fake clock the test steps.
 */
import { NO_BUDGETS } from '../../src/domain/credits/budgets';
import { startTestServices, type AccountRef, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { fakeClock } from '../support/fake-clock';
import { pollUntil } from '../support/poll';
import { uniqueId } from '../support/unique-id';
import type { ChargeRow, StreamStart } from '../../src/domain/credits/lease-store';
import { takeLease } from '../../src/domain/credits/lease-take';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { StreamStarts } from '../../src/domain/credits/stream-starts';

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
const LEASE = 1_000_000;

/** An account with 10 credits, a live key and one lease of LEASE micro-credits. */
async function leased(): Promise<{ account: AccountRef; keyId: string; leaseId: string }> {
  const account = await gw.newAccount(10);
  const { id: keyId } = await gw.newKey(account);
  const leaseId = uniqueId('lease');
  await takeLease(store, {
    id: leaseId,
    accountId: account.id,
    keyId,
    budgets: NO_BUDGETS,
    minMicro: LEASE,
    wantMicro: LEASE,
    instanceId: 'inst_streams_test',
    now: new Date(),
  });
  return { account, keyId, leaseId };
}

const start = (l: { account: AccountRef; keyId: string; leaseId: string }, owedMicro: number): StreamStart => ({
  requestId: uniqueId('chatcmpl'),
  leaseId: l.leaseId,
  accountId: l.account.id,
  keyId: l.keyId,
  model: 'svc-chat-1',
  owedMicro,
});
const row = (s: StreamStart, costMicro: number, leaseMicro = costMicro): ChargeRow => ({
  requestId: s.requestId,
  leaseId: s.leaseId,
  accountId: s.accountId,
  keyId: s.keyId,
  model: s.model,
  leaseMicro,
  excessMicro: costMicro - leaseMicro,
});
const charged = async (requestId: string) => {
  const c = await db().one<{ n: string }>(`select coalesce(sum(amount_micro), 0) as n from lease_charges where request_id = ?`, [requestId]);
  const e = await db().one<{ n: string }>(`select coalesce(-sum(amount_micro), 0) as n from ledger_entries where kind = 'charge' and reference = ?`, [
    requestId,
  ]);
  return Number(c!.n) + Number(e!.n);
};
/** What a stream's row says it owes; undefined while it has no row. */
const owedOf = async (id: string) => {
  const owed = (await db().one<{ owed_micro: string }>(`select owed_micro from stream_starts where request_id = ?`, [id]))?.owed_micro;
  return owed === undefined ? undefined : Number(owed);
};
/** Until the stream's row says `owed` (undefined: until it has none): the ticks and their writes take what the machine gives them. */
const rowUntil = (id: string, owed: number | undefined) =>
  pollUntil(
    () => owedOf(id),
    (o) => o === owed,
    10_000,
    20,
  );
const balanceMicro = async (account: AccountRef) => Math.round((await gw.balance(account)) * 1e6);

test('a lease closed with a stream that never settled charges it its prompt, once; the rest of the lease goes back', async () => {
  const l = await leased();
  const cut = start(l, 1_234);
  await store.writeStreamStarts([cut]);
  await store.writeStreamStarts([cut]); // written twice (a retried tick): one row
  expect(await store.close(l.leaseId)).toBe(LEASE - 1_234);
  expect(await charged(cut.requestId)).toBe(1_234);
  expect(await balanceMicro(l.account)).toBe(10_000_000 - 1_234);
  // Closed already: a second close does nothing.
  expect(await store.close(l.leaseId)).toBe(-1);
  expect(await charged(cut.requestId)).toBe(1_234);
});

test('a stream settled before the close is charged what it cost, not its prompt on top', async () => {
  const l = await leased();
  const done = start(l, 500);
  await store.writeStreamStarts([done]);
  expect((await store.record([row(done, 2_000)]))[0]).toMatchObject({ status: 0, chargedMicro: 2_000 });
  expect(await store.close(l.leaseId)).toBe(LEASE - 2_000);
  expect(await charged(done.requestId)).toBe(2_000);
  // A start written after its charge (a tick racing the settle) writes nothing.
  await store.writeStreamStarts([done]);
  expect(Number((await db().one<{ n: string }>(`select count(*) as n from stream_starts where request_id = ?`, [done.requestId]))!.n)).toBe(0);
});

test('a stream whose real charge arrives after its lease was closed pays the rest from the balance, once', async () => {
  const l = await leased();
  const late = start(l, 300);
  await store.writeStreamStarts([late]);
  expect(await store.close(l.leaseId)).toBe(LEASE - 300);
  const before = await balanceMicro(l.account);
  // It cost 1,000 in all: 300 was charged at the close, 700 now.
  expect((await store.record([row(late, 1_000)]))[0]).toMatchObject({ status: 0, chargedMicro: 700 });
  expect(await balanceMicro(l.account)).toBe(before - 700);
  expect(await charged(late.requestId)).toBe(1_000);
  // The journal replays it again: nothing more.
  expect((await store.record([row(late, 1_000)]))[0]).toMatchObject({ status: 0, chargedMicro: 0 });
  expect(await charged(late.requestId)).toBe(1_000);
});

test('StreamStarts writes only the streams that outlive its delay, keeps what they owe up to date, and deletes their rows once they settle', async () => {
  const l = await leased();
  const clock = fakeClock();
  const starts = new StreamStarts(store, { writeAfterMs: 100, updateEveryMs: 100 }, undefined, clock);
  const { owedMicro: _s, ...short } = start(l, 10);
  const { owedMicro: _l, ...long } = start(l, 20);
  let relayed = 20;
  starts.started(short, () => 10);
  starts.started(long, () => relayed);
  starts.settled(short.requestId);
  // Until the long one is written (after 100 ms, and its write); the short one, settled first, never is.
  await clock.tickAsync(100);
  await rowUntil(long.requestId, 20);
  expect([await owedOf(short.requestId), await owedOf(long.requestId)]).toEqual([undefined, 20]);
  // It relays more: the row follows at a later tick.
  relayed = 35;
  await clock.tickAsync(100);
  await rowUntil(long.requestId, 35);
  await store.record([row({ ...long, owedMicro: 0 }, 50)]);
  starts.settled(long.requestId);
  // Its row goes at a later tick.
  await clock.tickAsync(100);
  await rowUntil(long.requestId, undefined);
  expect(await store.close(l.leaseId)).toBe(LEASE - 50);
});

test('a lease closed with a stream whose row was brought up to date charges the latest figure', async () => {
  const l = await leased();
  const clock = fakeClock();
  const starts = new StreamStarts(store, { writeAfterMs: 50, updateEveryMs: 50 }, undefined, clock);
  const { owedMicro: _o, ...cut } = start(l, 0);
  let relayed = 100;
  starts.started(cut, () => relayed);
  await clock.tickAsync(50);
  await rowUntil(cut.requestId, 100);
  relayed = 400;
  await clock.tickAsync(50);
  await rowUntil(cut.requestId, 400);
  starts.stop();
  expect(await store.close(l.leaseId)).toBe(LEASE - 400);
  expect(await charged(cut.requestId)).toBe(400);
});
