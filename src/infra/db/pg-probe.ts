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
import { stateWithin, type DatabaseState } from './database-state';

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

  probe(timeoutMs: number): Promise<DatabaseState> {
    const connection = this.connection(timeoutMs);
    return stateWithin(
      this.health,
      timeoutMs,
      () => this.selectOne(connection),
      () => this.discard(connection),
    );
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

  /** Tells the health tracker what the connection in use says; a dropped one's late answer or error says nothing. */
  private async selectOne(entry: ProbeConnection): Promise<void> {
    try {
      await entry.ready;
      await entry.client.query('select 1');
      if (this.current === entry) this.health.succeeded();
    } catch (err) {
      if (this.current === entry && isDatabaseUnreachable(err)) this.health.failed(err);
      throw err;
    }
  }

  private discard(entry: ProbeConnection): void {
    if (this.current === entry) this.current = null;
    // Connected: end() closes the socket even with the probe's query stuck on it. Still connecting:
    // the connect's timeout closes it.
    entry.ready.then(() => entry.client.end()).catch(() => undefined);
  }
}
