/**
 * A cached key in use is read again in the background before its entry expires, at a moment
 * drawn per entry (key-cache.ts): its requests never wait for the database after the first, the
 * keys met together are not all read again together, a key revoked without the news reaching
 * this instance is dropped by that read, and a read that fails leaves the entry serving until
 * it expires. A KeyService on the test gateway's database (PGlite, or PostgreSQL in CI's second
 * pass), on a fake clock the test steps, with the key reads counted and gated.
 */
import { NO_BUDGETS } from '../../src/domain/credits/budgets';
import { startTestServices, type TestServices } from '../support/test-services';
import { fakeClock } from '../support/fake-clock';
import { pollUntil } from '../support/poll';
import { KeyCache } from '../../src/domain/keys/key-cache';
import { KeyService } from '../../src/domain/keys/key-service';
import { SqlKeyRepository } from '../../src/infra/db/repositories/sql-key-repository';
import type { Database, SqlExecutor } from '../../src/domain/ports/database';
import type { UrlGuard } from '../../src/domain/ports/url-guard';
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';
import { credentialsOf } from '../../src/domain/keys/key-secrets';

let gw: TestServices;
beforeAll(async () => {
  gw = await startTestServices();
});
afterAll(async () => {
  await gw.close();
});

/**
 * The gateway's database, with its api_keys reads counted (`count` when they start, `finished`
 * when they have answered or failed) and, while `gate` is set, held.
 */
function watchedDatabase(db: Database) {
  const reads = { count: 0, finished: 0, gate: undefined as Promise<void> | undefined, fail: false };
  const watched_ = async <T>(sql: string, read: () => Promise<T>): Promise<T> => {
    if (!/from api_keys where id (=|in)/.test(sql)) return read();
    reads.count++;
    try {
      if (reads.gate) await reads.gate;
      if (reads.fail) throw new Error('the database went away');
      return await read();
    } finally {
      reads.finished++;
    }
  };
  const watched: Database = {
    dialect: db.dialect,
    all: <T>(sql: string, params?: readonly unknown[]) => watched_(sql, () => db.all<T>(sql, params)),
    one: <T>(sql: string, params?: readonly unknown[]) => watched_(sql, () => db.one<T>(sql, params)),
    run: (sql, params) => db.run(sql, params),
    transaction: <T>(work: (tx: SqlExecutor) => Promise<T>) => db.transaction(work),
  };
  return { watched, reads };
}

const noUrls: UrlGuard = { checkMediaUrl: async (u) => String(u), checkWebhookUrl: async (u) => String(u) };

async function setUp(random = () => 0) {
  const clock = fakeClock();
  const { watched, reads } = watchedDatabase(gw.database.db);
  const cache = new KeyCache(new LocalTopicFeed(), clock, random);
  const keys = new KeyService(new SqlKeyRepository(watched), () => true, noUrls, cache, undefined, clock);
  const account = await gw.newAccount(1);
  const key = await gw.newKey(account);
  return { clock, reads, cache, keys, key };
}

const SECOND = 1000;
/** How long the refresher's batch waits for company before its read (key-refresher.ts). */
const REFRESH_BATCH_MS = 100;
/** Until `n` key reads have started. */
const readsStarted = (reads: { count: number }, n: number) =>
  pollUntil(
    async () => reads.count,
    (c) => c >= n,
    10_000,
    10,
  );
/** Until `n` key reads have answered (or failed), and what the refresher does with the answer is done. */
const readsDone = async (reads: { finished: number }, n: number) => {
  await pollUntil(
    async () => reads.finished,
    (c) => c >= n,
    10_000,
    10,
  );
  await new Promise((r) => setImmediate(r));
};

test('a key in use is read again in the background before it expires: no request waits for the database after the first', async () => {
  const { clock, reads, keys, key } = await setUp(() => 0); // refresh from 30 s
  expect((await keys.authenticate(key.secret)).keyId).toBe(key.id);
  expect(reads.count).toBe(1);

  await clock.tickAsync(29 * SECOND);
  await keys.authenticate(key.secret);
  expect(reads.count).toBe(1);

  // Past the refresh time: the request is answered from memory while the read is held back.
  await clock.tickAsync(2 * SECOND);
  let release!: () => void;
  reads.gate = new Promise<void>((r) => (release = r));
  // Answered before the refresher's batch has even left (it waits on the fake clock), so not waiting for its read.
  expect((await keys.authenticate(key.secret)).keyId).toBe(key.id);
  expect(reads.count).toBe(1);
  await clock.tickAsync(REFRESH_BATCH_MS);
  await readsStarted(reads, 2);
  expect(reads.count).toBe(2);
  // One read per entry, however many requests come meanwhile.
  for (let i = 0; i < 5; i++) await keys.authenticate(key.secret);
  expect(reads.count).toBe(2);
  reads.gate = undefined;
  release();
  await readsDone(reads, 2);

  // The entry read at 31.1 s lives to 91.1 s: at 60 s (the first one's expiry) nothing is read, and
  // from 61.1 s it is read again in its turn.
  await clock.tickAsync(29 * SECOND);
  await keys.authenticate(key.secret);
  expect(reads.count).toBe(2);
  await clock.tickAsync(2 * SECOND);
  await keys.authenticate(key.secret);
  await clock.tickAsync(REFRESH_BATCH_MS);
  await readsDone(reads, 3);
  expect(reads.count).toBe(3);
});

test('a key revoked without the news reaching this instance is dropped by the background read', async () => {
  const { clock, reads, keys, key } = await setUp(() => 0);
  await keys.authenticate(key.secret);
  await gw.database.db.run(`update api_keys set revoked_at = now() where id = ?`, [key.id]);
  await clock.tickAsync(31 * SECOND);
  await keys.authenticate(key.secret); // still within its minute: served, and read again behind it
  await clock.tickAsync(REFRESH_BATCH_MS);
  await readsDone(reads, 2);
  expect(reads.count).toBe(2);
  await expect(keys.authenticate(key.secret)).rejects.toMatchObject({ code: 'invalid_api_key' });
});

test('a background read that fails leaves the entry serving until it expires, and a later use tries again', async () => {
  const { clock, reads, keys, key } = await setUp(() => 0);
  await keys.authenticate(key.secret);
  reads.fail = true;
  await clock.tickAsync(31 * SECOND);
  await keys.authenticate(key.secret);
  await clock.tickAsync(REFRESH_BATCH_MS);
  await readsDone(reads, 2);
  expect(reads.count).toBe(2);
  await keys.authenticate(key.secret); // tried again
  await clock.tickAsync(REFRESH_BATCH_MS);
  await readsDone(reads, 3);
  expect(reads.count).toBe(3);
  // Past the minute the entry is gone: the request itself reads, and a failure is its failure.
  await clock.tickAsync(30 * SECOND);
  await expect(keys.authenticate(key.secret)).rejects.toThrow();
  reads.fail = false;
  expect((await keys.authenticate(key.secret)).keyId).toBe(key.id);
});

test('keys come due together are read in one statement', async () => {
  const { clock, reads, keys } = await setUp(() => 0);
  const account = await gw.newAccount(1);
  const many = await Promise.all(Array.from({ length: 8 }, () => gw.newKey(account)));
  for (const k of many) await keys.authenticate(k.secret);
  expect(reads.count).toBe(8);
  await clock.tickAsync(31 * SECOND);
  for (const k of many) await keys.authenticate(k.secret);
  await clock.tickAsync(REFRESH_BATCH_MS);
  await readsDone(reads, 9);
  expect(reads.count).toBe(9);
  // Read again, each entry lives on: at the first entries' minute (60 s), no request reads.
  await clock.tickAsync(29 * SECOND);
  for (const k of many) expect((await keys.authenticate(k.secret)).keyId).toBe(k.id);
  expect(reads.count).toBe(9);
});

/** A key's secrets, for entries put straight into a cache. */
const someCredentials = credentialsOf({ secretHash: 'ab'.repeat(32), previousSecretHash: null, previousSecretUntil: null });
/** Time that stands at 0 (nothing here waits on it). */
const stoppedClock = { ...fakeClock(), now: () => 0 };

test('keys loaded in the same moment are due for their reads at moments spread over a quarter of the minute', () => {
  const cache = new KeyCache(new LocalTopicFeed(), stoppedClock);
  const principal = {
    kind: 'key' as const,
    keyId: 'k',
    accountId: 'a',
    mode: 'live' as const,
    allowedModels: null,
    blockedModels: null,
    budgets: NO_BUDGETS,
  };
  const due: number[] = [];
  for (let i = 0; i < 1000; i++) {
    cache.put(`key_${i}`, cache.startLoad(), principal, someCredentials);
    due.push(cache.get(`key_${i}`)!.refreshAt);
  }
  expect(Math.min(...due)).toBeGreaterThanOrEqual(30 * SECOND);
  expect(Math.max(...due)).toBeLessThanOrEqual(45 * SECOND);
  // Spread, not bunched: every 1.5-second slice of the 15 seconds has some.
  const slices = new Set(due.map((t) => Math.floor((t - 30 * SECOND) / 1500)));
  expect(slices.size).toBe(10);
});

test('a full cache evicts the key longest without a read, not one just read again in the background', () => {
  const cache = new KeyCache(new LocalTopicFeed(), stoppedClock, () => 0);
  const principal = {
    kind: 'key' as const,
    keyId: 'k',
    accountId: 'a',
    mode: 'live' as const,
    allowedModels: null,
    blockedModels: null,
    budgets: NO_BUDGETS,
  };
  const put = (id: string) => cache.put(id, cache.startLoad(), principal, someCredentials);
  for (let i = 0; i < 20_000; i++) put(`key_${i}`); // full (20,000 entries)
  cache.drop('key_19999');
  put('key_0'); // read again while there is room: it is in use
  put('key_new'); // full again
  put('key_newer'); // one entry goes
  expect(cache.get('key_0')).toBeDefined();
  expect(cache.get('key_1')).toBeUndefined();
  expect(cache.get('key_new')).toBeDefined();
  expect(cache.get('key_newer')).toBeDefined();
});
