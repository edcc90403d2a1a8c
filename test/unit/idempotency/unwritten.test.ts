/**
 * Responses and releases the database does not take are tried again until it does, newest write
 * of a key winning, within a memory bound. The database is a stand-in that refuses while "down":
 * the outage itself, over a real PostgreSQL, is test/e2e/outage-postgres.test.ts.
 */
import { IdempotencyService, RETRY_UNWRITTEN_MS } from '../../../src/domain/idempotency/idempotency-service';
import type { Database } from '../../../src/domain/ports/database';
import { SqlIdempotencyRepository } from '../../../src/infra/db/repositories/sql-idempotency-repository';

function flakyDatabase() {
  const state = { down: true, writes: [] as Array<{ sql: string; params: readonly unknown[] }> };
  const run = async (sql: string, params: readonly unknown[] = []) => {
    if (state.down) throw new Error('connection refused');
    state.writes.push({ sql, params });
    return 1;
  };
  const db = { run, all: async () => [], one: async () => undefined, transaction: async () => undefined, dialect: 'postgresql' } as unknown as Database;
  return { db, state };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const response = (text: string, bytes = 0) => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.concat([Buffer.from(text), Buffer.alloc(bytes)]),
});

test('a response and a release the database refused are written once it answers, in order, and not again', async () => {
  const { db, state } = flakyDatabase();
  const service = new IdempotencyService(new SqlIdempotencyRepository(db), { instanceId: 'inst_test', graceSeconds: 30 });
  await expect(service.complete('key_a', 'k1', response('{"id":1}'))).rejects.toThrow('connection refused');
  await expect(service.abandon('key_a', 'k2')).rejects.toThrow('connection refused');
  expect(service.unwrittenCount).toBe(2);

  await vi.advanceTimersByTimeAsync(RETRY_UNWRITTEN_MS); // still down: kept
  expect(service.unwrittenCount).toBe(2);
  state.down = false;
  await vi.advanceTimersByTimeAsync(RETRY_UNWRITTEN_MS);
  expect(service.unwrittenCount).toBe(0);
  expect(state.writes.map((w) => [/released = true/.test(w.sql) ? 'release' : 'response', w.params.at(-2)])).toEqual([
    ['response', 'k1'],
    ['release', 'k2'],
  ]);
  expect(Buffer.from(String(state.writes[0].params[2]), 'base64').toString()).toBe('{"id":1}');
  await vi.advanceTimersByTimeAsync(10 * RETRY_UNWRITTEN_MS);
  expect(state.writes).toHaveLength(2);
});

test('past the memory bound the oldest kept response is let go, and told', async () => {
  const { db, state } = flakyDatabase();
  const dropped: number[] = [];
  const service = new IdempotencyService(new SqlIdempotencyRepository(db), { instanceId: 'inst_test', graceSeconds: 30, onDropped: (n) => dropped.push(n) });
  // 30 MB each, 40 MB as base64: the second pushes the first out of the 64 MB bound.
  await expect(service.complete('key_a', 'old', response('old', 30 * 1024 * 1024))).rejects.toThrow();
  await expect(service.complete('key_a', 'new', response('new', 30 * 1024 * 1024))).rejects.toThrow();
  expect(dropped).toEqual([1]);
  expect(service.unwrittenCount).toBe(1);
  state.down = false;
  await vi.advanceTimersByTimeAsync(RETRY_UNWRITTEN_MS);
  expect(state.writes.map((w) => w.params.at(-2))).toEqual(['new']);
});
