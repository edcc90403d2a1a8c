import type { SqlExecutor } from '../../../src/domain/ports/database';
import type { WorkItem, WorkKind, WorkQueue } from '../../../src/domain/work/work-queue';
import { FakeRows, type FakeDatabase } from './fake-database';

interface Row {
  id: number;
  kind: WorkKind;
  ref: string;
  payload: Record<string, unknown>;
  attempts: number;
  dueMs: number;
  lockedUntilMs: number | null;
}

/** The work queue in memory, on the fake database's clock: one row per kind and ref, leases of `leaseSeconds`. */
export class FakeWorkQueue implements WorkQueue {
  private readonly table = new FakeRows<string, Row>();
  private nextId = 1;

  constructor(
    private readonly db: FakeDatabase,
    private readonly leaseSeconds = 30,
  ) {
    db.table(this.table);
  }

  /** The rows as a test reads them: kind, ref, payload and seconds until due. */
  rows(kind?: WorkKind): Array<{ kind: WorkKind; ref: string; payload: Record<string, unknown>; dueInSeconds: number }> {
    return [...this.table.rows.values()]
      .filter((r) => !kind || r.kind === kind)
      .map((r) => ({ kind: r.kind, ref: r.ref, payload: r.payload, dueInSeconds: (r.dueMs - this.db.nowMs) / 1000 }));
  }

  async schedule(tx: SqlExecutor, kind: WorkKind, ref: string, payload: object, delaySeconds = 0): Promise<void> {
    this.db.inTransaction(tx);
    const existing = this.table.rows.get(`${kind}:${ref}`);
    this.table.rows.set(`${kind}:${ref}`, {
      id: existing?.id ?? this.nextId++,
      kind,
      ref,
      payload: structuredClone(payload) as Record<string, unknown>,
      attempts: existing?.attempts ?? 0,
      dueMs: this.db.nowMs + delaySeconds * 1000,
      lockedUntilMs: null,
    });
  }

  async cancel(tx: SqlExecutor, kind: WorkKind, ref: string): Promise<void> {
    this.db.inTransaction(tx);
    this.table.rows.delete(`${kind}:${ref}`);
  }

  async claim(limit: number): Promise<WorkItem[]> {
    const now = this.db.nowMs;
    const due = [...this.table.rows.values()]
      .filter((r) => r.dueMs <= now && (r.lockedUntilMs === null || r.lockedUntilMs < now))
      .sort((a, b) => a.dueMs - b.dueMs)
      .slice(0, limit);
    return due.map((r) => {
      r.attempts++;
      r.lockedUntilMs = now + this.leaseSeconds * 1000;
      return { id: r.id, kind: r.kind, ref: r.ref, payload: structuredClone(r.payload), attempts: r.attempts, dueAt: new Date(r.dueMs) };
    });
  }

  private byId(id: number): Row | undefined {
    return [...this.table.rows.values()].find((r) => r.id === id);
  }

  async done(item: WorkItem, tx?: SqlExecutor): Promise<void> {
    this.db.maybeInTransaction(tx);
    const row = this.byId(item.id);
    if (row) this.table.rows.delete(`${row.kind}:${row.ref}`);
  }

  async retryLater(item: WorkItem, delaySeconds: number, payload: object = item.payload, tx?: SqlExecutor): Promise<void> {
    this.db.maybeInTransaction(tx);
    const row = this.byId(item.id);
    if (!row) return;
    row.dueMs = this.db.nowMs + delaySeconds * 1000;
    row.lockedUntilMs = null;
    row.payload = structuredClone(payload) as Record<string, unknown>;
  }

  async fence(item: WorkItem, payload: object): Promise<boolean> {
    const row = this.byId(item.id);
    if (!row || row.attempts !== item.attempts || row.lockedUntilMs === null || row.lockedUntilMs <= this.db.nowMs) return false;
    row.payload = structuredClone(payload) as Record<string, unknown>;
    item.payload = payload as Record<string, unknown>;
    return true;
  }

  async renew(items: WorkItem[]): Promise<number> {
    let renewed = 0;
    for (const item of items) {
      const row = this.byId(item.id);
      if (row && row.attempts === item.attempts && row.lockedUntilMs !== null) {
        row.lockedUntilMs = this.db.nowMs + this.leaseSeconds * 1000;
        renewed++;
      }
    }
    return renewed;
  }

  async release(items: WorkItem[]): Promise<void> {
    for (const item of items) {
      const row = this.byId(item.id);
      if (row && row.attempts === item.attempts) row.lockedUntilMs = null;
    }
  }

  async nextDueInMs(): Promise<number | null> {
    const rows = [...this.table.rows.values()];
    if (rows.length === 0) return null;
    return Math.max(0, Math.min(...rows.map((r) => Math.max(r.dueMs, r.lockedUntilMs ?? r.dueMs))) - this.db.nowMs);
  }
}
