import type { Database, SqlExecutor } from '../../../domain/ports/database';
import type { WorkItem, WorkKind, WorkQueue } from '../../../domain/work/work-queue';

interface WorkRow {
  id: string | number;
  kind: WorkKind;
  ref: string;
  payload: unknown;
  attempts: number;
  due_at: Date;
}

/** The work queue on `work_items`: claims with `FOR UPDATE SKIP LOCKED`, leases of `leaseSeconds` by the database's clock. */
export class SqlWorkQueue implements WorkQueue {
  constructor(
    private readonly db: Database,
    private readonly leaseSeconds: number,
  ) {}

  async schedule(tx: SqlExecutor, kind: WorkKind, ref: string, payload: object, delaySeconds = 0): Promise<void> {
    await tx.run(
      `insert into work_items (kind, ref, payload, due_at) values (?, ?, ?::jsonb, now() + make_interval(secs => ?))
       on conflict (kind, ref) do update set payload = excluded.payload, due_at = excluded.due_at, locked_until = null`,
      [kind, ref, JSON.stringify(payload), delaySeconds],
    );
  }

  async cancel(tx: SqlExecutor, kind: WorkKind, ref: string): Promise<void> {
    await tx.run(`delete from work_items where kind = ? and ref = ?`, [kind, ref]);
  }

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

  async done(item: WorkItem, tx: SqlExecutor = this.db): Promise<void> {
    await tx.run(`delete from work_items where id = ?`, [item.id]);
  }

  async retryLater(item: WorkItem, delaySeconds: number, payload: object = item.payload, tx: SqlExecutor = this.db): Promise<void> {
    await tx.run(`update work_items set due_at = now() + make_interval(secs => ?), locked_until = null, payload = ?::jsonb where id = ?`, [
      delaySeconds,
      JSON.stringify(payload),
      item.id,
    ]);
  }

  async fence(item: WorkItem, payload: object): Promise<boolean> {
    const row = await this.db.one<{ id: string | number }>(
      `update work_items set payload = ?::jsonb where id = ? and attempts = ? and locked_until > now() returning id`,
      [JSON.stringify(payload), item.id, item.attempts],
    );
    if (row) item.payload = payload as Record<string, unknown>;
    return row !== undefined;
  }

  async renew(items: WorkItem[]): Promise<number> {
    if (items.length === 0) return 0;
    const pairs = items.map(() => '(?, ?)').join(', ');
    const rows = await this.db.all<{ id: string | number }>(
      `update work_items set locked_until = now() + make_interval(secs => ?) where (id, attempts) in (${pairs}) and locked_until is not null returning id`,
      [this.leaseSeconds, ...items.flatMap((i) => [i.id, i.attempts])],
    );
    return rows.length;
  }

  async release(items: WorkItem[]): Promise<void> {
    if (items.length === 0) return;
    const pairs = items.map(() => '(?, ?)').join(', ');
    await this.db.run(
      `update work_items set locked_until = null where (id, attempts) in (${pairs})`,
      items.flatMap((i) => [i.id, i.attempts]),
    );
  }

  async nextDueInMs(): Promise<number | null> {
    const row = await this.db.one<{ ms: string | number | null }>(
      `select extract(epoch from (min(greatest(due_at, coalesce(locked_until, due_at))) - now())) * 1000 as ms from work_items`,
    );
    return row?.ms == null ? null : Math.max(0, Number(row.ms));
  }
}
