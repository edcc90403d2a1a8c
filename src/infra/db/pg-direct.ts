/**
 * The hot path's own PostgreSQL connections: the `pg` driver directly, with each statement
 * prepared once per connection (a named query), for the few statements every billed call runs
 * (the charge batch). Through knex those cost a connection acquire and release, a query
 * compile and a bindings pass per statement: at c=1 about a sixth of the gateway's CPU per call
 * in the bench profile. Everything else keeps going through MikroORM's knex.
 *
 * Same contract as the knex executor: `?` placeholders, real bind parameters, and a database
 * that cannot be reached becomes `service_unavailable` and is reported to the health tracker.
 */
import { createHash } from 'node:crypto';
import { Pool } from 'pg';
import type { SqlExecutor } from '../../domain/ports/database';
import { type DatabaseHealth, reachable } from './db-unavailable';

interface Prepared {
  name: string;
  text: string;
}

/** `?` → `$1…$n`, outside quoted strings (the hot statements have none inside them anyway). */
function numbered(sql: string): string {
  let n = 0;
  let quoted = false;
  let out = '';
  for (const c of sql) {
    if (c === "'") quoted = !quoted;
    out += c === '?' && !quoted ? `$${++n}` : c;
  }
  return out;
}

export class PgDirectExecutor implements SqlExecutor {
  private readonly pool: Pool;
  private readonly prepared = new Map<string, Prepared>();

  constructor(
    connectionString: string,
    private readonly health: DatabaseHealth,
    maxConnections = 4,
  ) {
    this.pool = new Pool({ connectionString, max: maxConnections, idleTimeoutMillis: 30_000, connectionTimeoutMillis: 10_000 });
    // An idle connection the server dropped: the pool discards it; the next statement reconnects.
    this.pool.on('error', (err) => this.health.failed(err));
  }

  private statement(sql: string): Prepared {
    let p = this.prepared.get(sql);
    if (!p) {
      p = { name: `svc_${createHash('sha1').update(sql).digest('hex').slice(0, 16)}`, text: numbered(sql) };
      this.prepared.set(sql, p);
    }
    return p;
  }

  private query(sql: string, params: readonly unknown[]): Promise<{ rows: Record<string, unknown>[]; rowCount: number | null }> {
    return reachable(this.health, () => this.pool.query({ ...this.statement(sql), values: params as unknown[] }));
  }

  async all<T>(sql: string, params: readonly unknown[] = []): Promise<T[]> {
    return (await this.query(sql, params)).rows as T[];
  }

  async one<T>(sql: string, params: readonly unknown[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  async run(sql: string, params: readonly unknown[] = []): Promise<number> {
    return (await this.query(sql, params)).rowCount ?? 0;
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
