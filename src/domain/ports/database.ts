/**
 * The narrow SQL port the repositories use. Money and work-queue operations need conditional
 * UPDATEs and `FOR UPDATE SKIP LOCKED`, so repositories speak SQL; infra/db runs it through
 * MikroORM's connection (PostgreSQL or embedded PGlite) with real bind parameters.
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
  /** Runs `work` in one transaction: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  readonly dialect: 'postgresql' | 'pglite';
}
