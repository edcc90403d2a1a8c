import type { Knex } from '@mikro-orm/postgresql';
import type { Database, SqlExecutor } from '../../domain/ports/database';
import { DatabaseHealth, reachable } from './db-unavailable';
import { stateWithin, type DatabaseState } from './database-state';

interface RawResult {
  rows?: Record<string, unknown>[];
  rowCount?: number | null;
  affectedRows?: number;
}

/**
 * Runs SQL through MikroORM's knex connection with real bind parameters (never interpolated).
 * A statement that fails because the database cannot be reached becomes `service_unavailable`
 * (503 with Retry-After) instead of an internal error, and is reported to the health tracker.
 */
class KnexExecutor implements SqlExecutor {
  constructor(
    protected readonly knex: Knex | Knex.Transaction,
    protected readonly health: DatabaseHealth,
  ) {}

  protected guarded<R>(work: () => Promise<R>): Promise<R> {
    return reachable(this.health, work);
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    const res = await this.guarded<RawResult>(() => this.knex.raw(sql, params as Knex.RawBinding[]));
    return (res.rows ?? []) as T[];
  }

  async one<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    const rows = await this.all<T>(sql, params);
    return rows[0];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    const res = await this.guarded<RawResult>(() => this.knex.raw(sql, params as Knex.RawBinding[]));
    // pg reports rowCount, the PGlite dialect affectedRows.
    return res.rowCount ?? res.affectedRows ?? 0;
  }
}

export class KnexDatabase extends KnexExecutor implements Database {
  constructor(
    private readonly root: Knex,
    readonly dialect: 'postgresql' | 'pglite',
    health: DatabaseHealth = new DatabaseHealth(),
  ) {
    super(root, health);
  }

  /** Whether the database answered the last statement (or the last probe). */
  get healthy(): boolean {
    return this.health.isUp;
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    // A failure to begin or commit is a connection failure too.
    return this.guarded(() => this.root.transaction((trx) => work(new KnexExecutor(trx, this.health))));
  }

  /** /healthz's probe on PGlite (PostgreSQL's has a connection of its own, pg-probe.ts). */
  probe(timeoutMs: number): Promise<DatabaseState> {
    return stateWithin(this.health, timeoutMs, () => this.guarded(() => this.root.raw('select 1')));
  }
}
