import type { SqlExecutor } from '../ports/database';

export type WorkKind = 'video_poll' | 'video_cancel' | 'webhook_delivery' | 'hold_expiry' | 'key_expiring';

export interface WorkItem<P = Record<string, unknown>> {
  id: number;
  kind: WorkKind;
  ref: string;
  payload: P;
  attempts: number;
  dueAt: Date;
}

/**
 * The transactional outbox. Work that must survive a crash is a row with a due time, written in
 * the same transaction as the state change that caused it, and claimed with SKIP LOCKED under a
 * lease: if the instance that claimed it dies, the lease runs out and any instance takes it.
 * Handlers are idempotent (a job finishes once, a refund happens once), so a re-run is safe.
 * Times are the database's clock. Its SQL: infra/db/repositories/sql-work-queue.ts.
 *
 * An operation that must commit with the caller's state change takes the caller's transaction
 * first; one that may takes it last, and without it commits on its own.
 */
export interface WorkQueue {
  /** Schedules `kind/ref` (one row per pair: scheduling again moves the existing row). */
  schedule(tx: SqlExecutor, kind: WorkKind, ref: string, payload: object, delaySeconds?: number): Promise<void>;
  /** Drops `kind/ref`, claimed or not: the work it stood for is over. */
  cancel(tx: SqlExecutor, kind: WorkKind, ref: string): Promise<void>;
  /** Claims up to `limit` due items for this instance's lease. */
  claim(limit: number): Promise<WorkItem[]>;
  done(item: WorkItem, tx?: SqlExecutor): Promise<void>;
  /** Puts an item back with a new due time (and payload, by default its own), releasing the lease. */
  retryLater(item: WorkItem, delaySeconds: number, payload?: object, tx?: SqlExecutor): Promise<void>;
  /**
   * Records `payload` on an item only while this claim still holds it: `attempts` counts claims,
   * so it is the fencing token of the lease. Answers false when the lease was lost (it ran out
   * and another claim took the row, or the row is gone), in which case the caller must not act;
   * true sets `item.payload`.
   */
  fence(item: WorkItem, payload: object): Promise<boolean>;
  /**
   * Extends the leases of items this instance is still running; a row whose claim was lost
   * (its `attempts` moved on) is left alone. Answers how many leases were extended.
   */
  renew(items: WorkItem[]): Promise<number>;
  /**
   * Gives leases back (clean shutdown): the rows become claimable at once by another instance
   * instead of after their lease runs out.
   */
  release(items: WorkItem[]): Promise<void>;
  /** When the next item is due, to sleep until then (bounded by the caller). */
  nextDueInMs(): Promise<number | null>;
}
