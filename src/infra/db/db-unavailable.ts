import { DomainError } from '../../domain/errors/domain-error';

/** What a client is told to wait when the database does not answer. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
// admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
const MESSAGES =
  /connection terminated|timeout acquiring a connection|connection (is )?closed|client has encountered a connection error|terminating connection|server closed the connection|connect ECONNREFUSED|read ECONNRESET/i;

/**
 * True when `err` says the database could not be reached (network, server shutting down, pool
 * exhausted), as opposed to an error of the statement itself (a constraint, a bad query).
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08'))) return true;
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && MESSAGES.test(message)) return true;
  }
  return false;
}

/** The one error a request gets while the database is away: 503 with Retry-After. */
export function databaseUnavailable(cause: unknown): DomainError {
  return new DomainError('service_unavailable', 'The service is temporarily unavailable; retry shortly.', {
    code: 'database_unavailable',
    retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS,
    cause,
  });
}

/** Whether the database answered lately, for /healthz, metrics and logs. */
export class DatabaseHealth {
  private up = true;
  constructor(private readonly onChange: (up: boolean, err?: unknown) => void = () => undefined) {}

  get isUp(): boolean {
    return this.up;
  }

  succeeded(): void {
    if (!this.up) {
      this.up = true;
      this.onChange(true);
    }
  }

  failed(err: unknown): void {
    if (this.up) {
      this.up = false;
      this.onChange(false, err);
    }
  }
}

/**
 * Runs one statement: a failure because the database cannot be reached becomes
 * `service_unavailable` (503 with Retry-After) and is reported to `health`; a success reports
 * the database up. Every executor (knex, pg-direct) goes through this.
 */
export async function reachable<R>(health: DatabaseHealth, work: () => Promise<R>): Promise<R> {
  try {
    const result = await work();
    health.succeeded();
    return result;
  } catch (err) {
    if (!isDatabaseUnreachable(err)) throw err;
    health.failed(err);
    throw databaseUnavailable(err);
  }
}
