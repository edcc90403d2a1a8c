import type { SqlExecutor } from '../../../src/domain/ports/database';

/** What a fake repository keeps: it hands out a way to put its state back, for a rolled-back transaction. */
export interface FakeTable {
  snapshot(): () => void;
}

const noSql = (): never => {
  throw new Error('a fake transaction runs no SQL: the domain passes it to a repository');
};

/**
 * The in-memory stand-in for one database that fake repositories share: its clock (moved by the
 * test, never by waiting) and its transactions, which put every table back when the work throws.
 * The transaction handle runs no SQL, so a domain class that spoke SQL would fail here.
 */
export class FakeDatabase {
  nowMs = Date.UTC(2026, 0, 1);
  private readonly tables: FakeTable[] = [];
  private readonly open = new Set<SqlExecutor>();

  now(): Date {
    return new Date(this.nowMs);
  }

  advanceSeconds(seconds: number): void {
    this.nowMs += seconds * 1000;
  }

  table<T extends FakeTable>(table: T): T {
    this.tables.push(table);
    return table;
  }

  async transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const tx: SqlExecutor = { all: noSql, one: noSql, run: noSql };
    const restore = this.tables.map((t) => t.snapshot());
    this.open.add(tx);
    try {
      return await work(tx);
    } catch (err) {
      for (const r of restore) r();
      throw err;
    } finally {
      this.open.delete(tx);
    }
  }

  /** A write that must commit with others is given their transaction, still open. */
  inTransaction(tx: SqlExecutor | undefined): void {
    if (!tx || !this.open.has(tx)) throw new Error('this write must run in an open transaction');
  }

  /** An optional transaction, when given, is an open one. */
  maybeInTransaction(tx: SqlExecutor | undefined): void {
    if (tx) this.inTransaction(tx);
  }
}

/** A Map whose entries a rolled-back transaction puts back (values are copied, so later edits of them roll back too). */
export class FakeRows<K, V extends object> implements FakeTable {
  readonly rows = new Map<K, V>();
  snapshot(): () => void {
    const copy = new Map([...this.rows].map(([k, v]) => [k, structuredClone(v)]));
    return () => {
      this.rows.clear();
      for (const [k, v] of copy) this.rows.set(k, v);
    };
  }
}
