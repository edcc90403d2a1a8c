/**
 * /healthz's database probe on PostgreSQL, on a connection of its own. Through the shared knex
 * pool a `select 1` waited behind every queued statement: under a burst (10,000 subscriptions
 * reading their jobs, heavy edits starving the server of CPU) the probe took seconds while
 * PostgreSQL itself answered in milliseconds, and a health check that found the last answer
 * stale waited with it. A probe should measure whether the server answers, not how long this
 * instance's queue is.
 *
 * One connection, opened on first use. A probe that does not answer within its timeout discards
 * the connection (a stalled server, or a half-open socket that would otherwise hold the probe
 * forever) and the next probe opens a fresh one; the late answer or error of the discarded one
 * is ignored, so it cannot report the database down after the fact.
 */
import { Client } from 'pg';
import { type DatabaseHealth, isDatabaseUnreachable } from './db-unavailable';
import type { DatabaseState } from './knex-database';

interface ProbeConnection {
  client: Client;
  ready: Promise<void>;
}

export class PgProbe {
  private current: ProbeConnection | null = null;

  constructor(
    private readonly connectionString: string,
    private readonly health: DatabaseHealth,
  ) {}

  async probe(timeoutMs: number): Promise<DatabaseState> {
    const connection = this.connection(timeoutMs);
    let timer: NodeJS.Timeout | undefined;
    const slow = Symbol('slow');
    const timeout = new Promise<typeof slow>((resolve) => (timer = setTimeout(() => resolve(slow), timeoutMs)));
    try {
      const answer = await Promise.race([this.selectOne(connection), timeout]);
      if (answer !== slow) return 'up';
      this.discard(connection);
      return this.health.isUp ? 'slow' : 'down';
    } catch (err) {
      this.discard(connection);
      if (isDatabaseUnreachable(err)) this.health.failed(err);
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    const connection = this.current;
    this.current = null;
    return connection ? connection.client.end().catch(() => undefined) : Promise.resolve();
  }

  private connection(timeoutMs: number): ProbeConnection {
    if (this.current) return this.current;
    // The connect's own timeout is past the probe's, so that a connect the server does not answer
    // reads as slow (the probe's timeout), not as down; it still closes a connect that never ends.
    const client = new Client({ connectionString: this.connectionString, connectionTimeoutMillis: 2 * timeoutMs, application_name: 'svc-healthz-probe' });
    const entry: ProbeConnection = { client, ready: client.connect().then(() => undefined) };
    // An idle connection the server dropped emits 'error'; without a listener that is a crash.
    client.on('error', (err) => {
      if (this.current !== entry) return;
      this.discard(entry);
      if (isDatabaseUnreachable(err)) this.health.failed(err);
    });
    this.current = entry;
    return entry;
  }

  private async selectOne(entry: ProbeConnection): Promise<void> {
    await entry.ready;
    await entry.client.query('select 1');
    if (this.current === entry) this.health.succeeded();
  }

  private discard(entry: ProbeConnection): void {
    if (this.current === entry) this.current = null;
    // Connected: end() closes the socket even with the probe's query stuck on it. Still connecting:
    // the connect's timeout closes it.
    entry.ready.then(() => entry.client.end()).catch(() => undefined);
  }
}
