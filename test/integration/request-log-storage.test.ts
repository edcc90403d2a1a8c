/**
 * The request log's rows in the database (PGlite, or PostgreSQL in CI's second pass): a charged
 * call's row rides with its charge (the lone charge statement, svc_record_charges' set-wise pass
 * and its row walk) with the credits the charge took; a charge recorded twice, or replayed from
 * the charge journal after the database failed it, brings its row once; and the day partitions
 * are made ahead and dropped past the retention as the clock's days go by, rows of a day without
 * a partition moved in when it is made.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServices, type AccountRef, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { fakeClock } from '../support/fake-clock';
import { uniqueId } from '../support/unique-id';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { SqlRequestLog } from '../../src/infra/db/repositories/sql-request-log';
import { FileChargeJournal } from '../../src/infra/credits/file-charge-journal';
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';
import { ChargeBatcher } from '../../src/domain/credits/charge-batcher';
import { LeaseBook } from '../../src/domain/credits/lease-book';
import type { ChargeRow, LeaseStore } from '../../src/domain/credits/lease-store';
import { takeLease } from '../../src/domain/credits/lease-take';
import { NO_BUDGETS } from '../../src/domain/credits/budgets';
import { CallLog, type RequestLogRow } from '../../src/domain/requests/call-log';
import { RequestLogUpkeep } from '../../src/domain/requests/request-log-upkeep';
import { creditsToMicro } from '../../src/domain/shared/money';
import { systemClock } from '../../src/domain/shared/system-clock';

let gw: TestServices;
let leases: SqlLeaseStore;
let log: SqlRequestLog;
beforeAll(async () => {
  gw = await startTestServices();
  leases = new SqlLeaseStore(gw.database.db);
  log = new SqlRequestLog(gw.database.db);
});
afterAll(async () => {
  try {
    await expectLedgerInvariants(gw.database.db);
  } finally {
    await gw.close();
  }
});

const db = () => gw.database.db;
const DAY_MS = 86_400_000;

/** A call's row, as the door opens it (nothing writes it unless a charge carries it). */
const callLog = (account: AccountRef, keyId: string, createdMs = Date.now()) =>
  new CallLog(uniqueId('req_x').replace(/-/g, '_'), createdMs, account.id, keyId, '/v1/chat/completions', null, systemClock, () => {
    throw new Error('a carried row is never handed to the writer');
  });

async function setUp(credits: number, leaseMicro: number) {
  const account = await gw.newAccount(credits);
  const { id: keyId } = await gw.newKey(account);
  const leaseId = uniqueId('lease');
  await takeLease(leases, {
    id: leaseId,
    accountId: account.id,
    keyId,
    budgets: NO_BUDGETS,
    minMicro: leaseMicro,
    wantMicro: leaseMicro,
    instanceId: 'inst_log',
    now: new Date(),
  });
  const charge = (leaseMicro: number, excessMicro = 0, requestId = uniqueId('chatcmpl')): ChargeRow & { log: CallLog } => {
    const row = callLog(account, keyId);
    row.named('svc-chat-1');
    row.usedTokens(10, 2);
    return { requestId, leaseId, accountId: account.id, keyId, model: 'svc-chat-1', leaseMicro, excessMicro, log: row.carry() as CallLog };
  };
  return { account, keyId, leaseId, charge };
}

const stored = async (id: string) => (await log.page(await accountOf(id), {}, 100)).find((r) => r.id === id);
const accountOf = async (id: string) => (await db().one<{ account_id: string }>(`select account_id from request_log where id = ?`, [id]))?.account_id ?? '';
/** The row a charge carried, as the log keeps it: every field as the call set it, its credits what the charge took. */
const asStored = (c: { log: CallLog }, creditsMicro: number) => ({ ...(JSON.parse(JSON.stringify(c.log)) as object), creditsMicro });
const count = async (id: string) => Number((await db().one<{ n: string }>(`select count(*) as n from request_log where id = ?`, [id]))!.n);

test('a charge carries its row: alone, in a batch, beyond its lease; its credits are what the charge took', async () => {
  const { charge, leaseId } = await setUp(10, creditsToMicro(1));
  const lone = charge(300_000);
  expect(await leases.record([lone])).toEqual([{ requestId: lone.requestId, status: 0, chargedMicro: 300_000 }]);
  expect(await stored(lone.log.id)).toMatchObject({ creditsMicro: 300_000, model: 'svc-chat-1', promptTokens: 10, completionTokens: 2, status: 200 });
  expect(await stored(lone.log.id)).toEqual(asStored(lone, 300_000));

  const [a, b] = [charge(100_000), charge(200_000)];
  await leases.record([a, b]);
  expect(await stored(a.log.id)).toEqual(asStored(a, 100_000));
  expect(await stored(b.log.id)).toEqual(asStored(b, 200_000));

  // Beyond the lease: the row walk debits the balance, and the row says the whole charge.
  const beyond = charge(400_000, 2_000_000);
  const [outcome] = await leases.record([beyond]);
  expect(outcome).toEqual({ requestId: beyond.requestId, status: 0, chargedMicro: 2_400_000 });
  expect(await stored(beyond.log.id)).toEqual(asStored(beyond, 2_400_000));

  // After the lease closed (a late charge, from the balance directly).
  await leases.close(leaseId);
  const late = charge(50_000);
  expect((await leases.record([late]))[0]!.chargedMicro).toBe(50_000);
  expect(await stored(late.log.id)).toEqual(asStored(late, 50_000));

  // Recorded again (a replay of a charge whose commit had landed): one row, as it was.
  expect((await leases.record([lone, late]))[0]!.chargedMicro).toBe(0);
  expect(await count(lone.log.id)).toBe(1);
  expect(await stored(lone.log.id)).toEqual(asStored(lone, 300_000));
});

test('a charge the database failed is kept in the journal with its row, and brings the row when replayed', async () => {
  const { account, keyId } = await setUp(10, creditsToMicro(1));
  const dir = mkdtempSync(join(tmpdir(), 'reqlog-journal-'));
  try {
    let down = true;
    const failing: LeaseStore = Object.assign(Object.create(leases) as LeaseStore, {
      record: (rows: readonly ChargeRow[]) => (down ? Promise.reject(new Error('connection terminated')) : leases.record(rows)),
    });
    const book = new LeaseBook(failing, new ChargeBatcher(failing), new LocalTopicFeed(), {
      instanceId: 'inst_journal',
      idleMs: 60_000,
      heartbeatMs: 60_000,
      graceSeconds: 600,
      wantFactor: 32,
      minWantMicro: creditsToMicro(1),
      journal: new FileChargeJournal({ dir, instanceId: 'inst_journal', adoptAfterMs: 60_000 }),
    });
    const key = {
      kind: 'key' as const,
      keyId,
      accountId: account.id,
      mode: 'live' as const,
      allowedModels: null,
      blockedModels: null,
      budgets: NO_BUDGETS,
    };
    const reservation = await book.reserve(key, 500_000);
    const row = callLog(account, keyId);
    row.named('svc-chat-1');
    expect(await book.commit(reservation, 400_000, uniqueId('chatcmpl'), 'svc-chat-1', row.carry())).toBe(400_000);
    const kept = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8'));
    expect(kept.join('')).toContain(row.id);
    expect(await count(row.id)).toBe(0);

    down = false;
    await book.recordKeptNow();
    expect(await stored(row.id)).toMatchObject({ creditsMicro: 400_000, keyId, model: 'svc-chat-1' });
    await book.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const partitions = async () =>
  (
    await db().all<{ name: string }>(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'request_log'::regclass and c.relname <> 'request_log_default' order by 1`,
    )
  ).map((r) => r.name);
const partitionOf = (ms: number) => `request_log_${new Date(ms).toISOString().slice(0, 10).replace(/-/g, '')}`;
const whereIs = async (id: string) => (await db().one<{ t: string }>(`select tableoid::regclass::text as t from request_log where id = ?`, [id]))?.t;

test('partitions: today and the next two made, older than the retention dropped, as the clock goes from day to day', async () => {
  const clock = fakeClock();
  const fail = (err: unknown) => {
    throw err;
  };
  const upkeep = new RequestLogUpkeep(log, clock, 2, fail);
  const day0 = Date.parse(`${new Date(clock.now()).toISOString().slice(0, 10)}T12:00:00Z`);
  await upkeep.pass();
  expect(await partitions()).toEqual(expect.arrayContaining([0, 1, 2].map((d) => partitionOf(day0 + d * DAY_MS))));

  // A row five days ahead has no partition yet: the default partition holds it until its day's is made.
  const account = await gw.newAccount();
  const { id: keyId } = await gw.newKey(account, { mode: 'test' });
  const today = callLog(account, keyId, day0);
  const ahead = callLog(account, keyId, day0 + 5 * DAY_MS);
  for (const r of [today, ahead]) r.named('svc-chat-1');
  await log.insert([today, ahead] as RequestLogRow[]);
  expect(await whereIs(ahead.id)).toBe('request_log_default');
  expect(await whereIs(today.id)).toBe(partitionOf(day0));

  clock.stepWall(3 * DAY_MS);
  // Two instances at once: the database takes them in turn, and the second finds nothing left to do.
  const [first, second] = await Promise.all([upkeep.pass(), upkeep.pass()]);
  expect(first.made + second.made).toBe(3);
  expect(first.dropped + second.dropped).toBe(1);
  expect(first.moved + second.moved).toBe(1);
  const now = await partitions();
  expect(now).toEqual(expect.arrayContaining([1, 3, 4, 5].map((d) => partitionOf(day0 + d * DAY_MS))));
  expect(now).not.toContain(partitionOf(day0));
  expect(await whereIs(ahead.id)).toBe(partitionOf(day0 + 5 * DAY_MS));
  expect(await count(today.id)).toBe(0);
  expect(await upkeep.pass()).toEqual({ made: 0, dropped: 0, moved: 0 });

  // Off (REQUEST_LOG_DAYS=0): every partition goes, and every row.
  const off = new RequestLogUpkeep(log, clock, 0, fail);
  await off.pass();
  expect(await partitions()).toEqual([]);
  expect(Number((await db().one<{ n: string }>(`select count(*) as n from request_log`))!.n)).toBe(0);
});
