import type { Knex } from '@mikro-orm/postgresql';
import type { Database, SqlExecutor } from '../../domain/ports/database';

interface RawResult {
  rows?: Record<string, unknown>[];
  rowCount?: number | null;
  affectedRows?: number;
}

/** Runs SQL through MikroORM's knex connection with real bind parameters (never interpolated). */
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
    // pg reports rowCount, the PGlite dialect affectedRows.
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
