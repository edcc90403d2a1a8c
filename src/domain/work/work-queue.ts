import type { Database, SqlExecutor } from '../ports/database';

export type WorkKind = 'video_poll' | 'webhook_delivery' | 'hold_expiry';

export interface WorkItem<P = Record<string, unknown>> {
  id: number;
  kind: WorkKind;
  ref: string;
  payload: P;
  attempts: number;
  dueAt: Date;
}

interface WorkRow {
  id: string | number;
  kind: WorkKind;
  ref: string;
  payload: unknown;
  attempts: number;
  due_at: Date;
}

/**
 * The transactional outbox. Work that must survive a crash is a row with a due time, written in
 * the same transaction as the state change that caused it, and claimed with SKIP LOCKED under a
 * lease: if the instance that claimed it dies, the lease runs out and any instance takes it.
 * Handlers are idempotent (a job finishes once, a refund happens once), so a re-run is safe.
 */
export class WorkQueue {
  constructor(
    private readonly db: Database,
    private readonly leaseSeconds: number,
  ) {}

  /** Schedules `kind/ref` (one row per pair: scheduling again moves the existing row). */
  async schedule(tx: SqlExecutor, kind: WorkKind, ref: string, payload: object, delaySeconds = 0): Promise<void> {
    await tx.run(
      `insert into work_items (kind, ref, payload, due_at) values (?, ?, ?::jsonb, now() + make_interval(secs => ?))
       on conflict (kind, ref) do update set payload = excluded.payload, due_at = excluded.due_at, locked_until = null`,
      [kind, ref, JSON.stringify(payload), delaySeconds],
    );
  }

  /** Claims up to `limit` due items for this instance's lease. */
  async claim(limit: number): Promise<WorkItem[]> {
    const rows = await this.db.all<WorkRow>(
      `update work_items set locked_until = now() + make_interval(secs => ?), attempts = attempts + 1
        where id in (select id from work_items
                      where due_at <= now() and (locked_until is null or locked_until < now())
                      order by due_at limit ? for update skip locked)
        returning id, kind, ref, payload, attempts, due_at`,
      [this.leaseSeconds, limit],
    );
    return rows.map((r) => ({
      id: Number(r.id),
      kind: r.kind,
      ref: r.ref,
      payload: (typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload) as Record<string, unknown>,
      attempts: r.attempts,
      dueAt: new Date(r.due_at),
    }));
  }

  async done(tx: SqlExecutor, item: WorkItem): Promise<void> {
    await tx.run(`delete from work_items where id = ?`, [item.id]);
  }

  /** Puts an item back with a new due time (and payload), releasing the lease. */
  async retryLater(tx: SqlExecutor, item: WorkItem, delaySeconds: number, payload: object = item.payload): Promise<void> {
    await tx.run(`update work_items set due_at = now() + make_interval(secs => ?), locked_until = null, payload = ?::jsonb where id = ?`, [
      delaySeconds,
      JSON.stringify(payload),
      item.id,
    ]);
  }

  /**
   * Records `payload` on an item only while this claim still holds it: `attempts` counts claims,
   * so it is the fencing token of the lease. Answers false when the lease was lost (it ran out
   * and another claim took the row, or the row is gone), in which case the caller must not act.
   */
  async fence(tx: SqlExecutor, item: WorkItem, payload: object): Promise<boolean> {
    const row = await tx.one<{ id: string | number }>(
      `update work_items set payload = ?::jsonb where id = ? and attempts = ? and locked_until > now() returning id`,
      [JSON.stringify(payload), item.id, item.attempts],
    );
    if (row) item.payload = payload as Record<string, unknown>;
    return row !== undefined;
  }

  /**
   * Extends the leases of items this instance is still running; a row whose claim was lost
   * (its `attempts` moved on) is left alone. Answers how many leases were extended.
   */
  async renew(items: WorkItem[]): Promise<number> {
    if (items.length === 0) return 0;
    const pairs = items.map(() => '(?, ?)').join(', ');
    const rows = await this.db.all<{ id: string | number }>(
      `update work_items set locked_until = now() + make_interval(secs => ?) where (id, attempts) in (${pairs}) and locked_until is not null returning id`,
      [this.leaseSeconds, ...items.flatMap((i) => [i.id, i.attempts])],
    );
    return rows.length;
  }

  /**
   * Gives leases back (clean shutdown): the rows become claimable at once by another instance
   * instead of after their lease runs out.
   */
  async release(items: WorkItem[]): Promise<void> {
    if (items.length === 0) return;
    const pairs = items.map(() => '(?, ?)').join(', ');
    await this.db.run(
      `update work_items set locked_until = null where (id, attempts) in (${pairs})`,
      items.flatMap((i) => [i.id, i.attempts]),
    );
  }

  /** When the next item is due, to sleep until then (bounded by the caller). */
  async nextDueInMs(): Promise<number | null> {
    const row = await this.db.one<{ ms: string | number | null }>(
      `select extract(epoch from (min(greatest(due_at, coalesce(locked_until, due_at))) - now())) * 1000 as ms from work_items`,
    );
    return row?.ms == null ? null : Math.max(0, Number(row.ms));
  }
}
