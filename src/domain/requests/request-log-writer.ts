/**
 * The rows no charge carries (refusals, failures, test keys, free calls): kept in memory and
 * written in batches every `flushMs` on the clock, never on a call's path. What waits is bounded
 * (`maxRows`): past it new rows are dropped and counted, so a database that stays away cannot
 * grow the process without end. A batch the database could not be asked (it is away, or did not
 * answer in time) stays for the next pass; one it answered with an error is dropped, counted,
 * since it would be refused again. A crash
 * loses what waits here, at most `flushMs` of uncharged rows (and those held while the database
 * was away); a charged call's row never waits here, it commits with its charge.
 */
import { DomainError } from '../errors/domain-error';
import type { Clock, TimerHandle } from '../ports/clock';
import type { RequestLogRow } from './call-log';
import type { RequestLogRepository } from './request-log-repository';

/** How long the last pass at shutdown may take. */
const STOP_WAIT_MS = 5_000;

export interface RequestLogWriterOptions {
  clock: Clock;
  /** How often what waits is written. */
  flushMs?: number;
  /** Rows one insert takes at most. */
  batchRows?: number;
  /** Rows that may wait at once; past it, new rows are dropped. */
  maxRows?: number;
  onError?: (err: unknown) => void;
  /** Rows dropped since the last report (the buffer was full). */
  onDropped?: (count: number) => void;
}

export class RequestLogWriter {
  private rows: RequestLogRow[] = [];
  private dropped = 0;
  private writing: Promise<void> | null = null;
  private timer: TimerHandle | undefined;
  private readonly flushMs: number;
  private readonly batchRows: number;
  private readonly maxRows: number;

  constructor(
    private readonly repository: Pick<RequestLogRepository, 'insert'>,
    private readonly options: RequestLogWriterOptions,
  ) {
    this.flushMs = options.flushMs ?? 1000;
    this.batchRows = options.batchRows ?? 2000;
    this.maxRows = options.maxRows ?? 50_000;
  }

  /** Rows waiting to be written. */
  get waiting(): number {
    return this.rows.length;
  }

  add(row: RequestLogRow): void {
    if (this.rows.length >= this.maxRows) this.dropped++;
    else this.rows.push(row);
  }

  start(): void {
    this.timer ??= this.options.clock.setInterval(() => void this.flush(), this.flushMs).unref();
  }

  /** Writes what waits (after a pass already under way, that one's outcome). */
  flush(): Promise<void> {
    this.writing ??= this.writeAll().finally(() => (this.writing = null));
    return this.writing;
  }

  /** No more passes on the timer; one last one for what waits, given STOP_WAIT_MS (a database that does not answer keeps no shutdown waiting). */
  async stop(): Promise<void> {
    this.options.clock.clearInterval(this.timer);
    this.timer = undefined;
    let timer: TimerHandle | undefined;
    const given = new Promise<void>((resolve) => (timer = this.options.clock.setTimeout(resolve, STOP_WAIT_MS).unref()));
    await Promise.race([this.flush(), given]);
    this.options.clock.clearTimeout(timer);
  }

  private async writeAll(): Promise<void> {
    if (this.dropped > 0) {
      this.options.onDropped?.(this.dropped);
      this.dropped = 0;
    }
    while (this.rows.length > 0) {
      const batch = this.rows.splice(0, this.batchRows);
      try {
        await this.repository.insert(batch);
      } catch (err) {
        this.options.onError?.(err);
        // A database that answered and refused the batch would refuse it again: it goes, counted.
        if (!(err instanceof DomainError && err.type === 'service_unavailable')) {
          this.dropped += batch.length;
          continue;
        }
        // Back at the front for the next pass, as far as the bound leaves room (the rest is dropped, counted).
        const room = Math.max(0, this.maxRows - this.rows.length);
        this.dropped += Math.max(0, batch.length - room);
        this.rows = [...batch.slice(0, room), ...this.rows];
        return;
      }
    }
  }
}
