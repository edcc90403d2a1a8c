import type { Knex } from '@mikro-orm/postgresql';

/**
 * The narrow SQL surface the repositories use. Money and work-queue operations need conditional
 * UPDATEs and `FOR UPDATE SKIP LOCKED`, so repositories speak SQL; this wrapper runs it through
 * MikroORM's knex connection with real bind parameters (never string-interpolated values).
 *
 * SQL passed here uses `?` placeholders and must be one statement with no `;` (the PGlite
 * dialect treats a `;` as a multi-statement script and would drop the bindings).
 */
export interface SqlExecutor {
  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  one<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs a statement and answers the number of rows it touched. */
  run(sql: string, params?: readonly unknown[]): Promise<number>;
}

export interface Database extends SqlExecutor {
  /** Runs `work` in one transaction; it commits when `work` resolves and rolls back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  readonly dialect: 'postgresql' | 'pglite';
}

interface RawResult {
  rows?: Record<string, unknown>[];
  rowCount?: number | null;
  affectedRows?: number;
}

class KnexExecutor implements SqlExecutor {
  constructor(protected readonly knex: Knex | Knex.Transaction) {}

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const res = (await this.knex.raw(sql, params as Knex.RawBinding[])) as RawResult;
    return (res.rows ?? []) as T[];
  }

  async one<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    const rows = await this.all<T>(sql, params);
    return rows[0];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    const res = (await this.knex.raw(sql, params as Knex.RawBinding[])) as RawResult;
    return res.rowCount ?? res.affectedRows ?? 0;
  }
}

export class KnexDatabase extends KnexExecutor implements Database {
  constructor(
    private readonly root: Knex,
    readonly dialect: 'postgresql' | 'pglite',
  ) {
    super(root);
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.root.transaction((trx) => work(new KnexExecutor(trx)));
  }
}
