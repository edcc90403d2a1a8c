/**
 * The outside phase's reads of the gateway's database, from the bench's process, only while the
 * gateway process is stopped: the embedded database (PGlite in DATA_DIR) has one owner at a time,
 * and a stopped gateway has settled its calls and given its leases back, which is the state the
 * money check reads. PostgreSQL is read the same way, so both stores get the same check.
 */
import { openDatabase } from '../src/infra/db/orm';
import type { SqlExecutor } from '../src/domain/ports/database';

export async function withStore<T>(store: { databaseUrl?: string; dataDir: string }, work: (db: SqlExecutor) => Promise<T>): Promise<T> {
  const database = await openDatabase({ databaseUrl: store.databaseUrl, dataDir: store.dataDir, migrate: false });
  try {
    return await work(database.db);
  } finally {
    await database.close();
  }
}

/** Credit leases the gateway took between two instants of this machine's clock (one per key coming into use). */
export async function leasesTakenBetween(db: SqlExecutor, from: Date, to: Date): Promise<number> {
  const row = await db.one<{ n: string | number }>(
    `select count(*) as n from credit_leases where created_at >= ?::timestamptz and created_at < ?::timestamptz`,
    [from.toISOString(), to.toISOString()],
  );
  return Number(row?.n ?? 0);
}
