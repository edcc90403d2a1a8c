/**
 * The request log: a row for every authenticated /v1 call that named a model (CallLog), kept
 * REQUEST_LOG_DAYS days, and read by its account's owner (a page at a time, or exported whole).
 * Writing it costs a call no round trip: a charged call's row commits with its charge, the
 * others are batched by the writer off the call's path. With `days` 0 the log is off: nothing
 * is written, and the upkeep drops what was kept.
 */
import type { Clock } from '../ports/clock';
import { CallLog, type RequestLogRow } from './call-log';
import type { RequestLogRepository } from './request-log-repository';
import { encodeCursor, readExportQuery, readListQuery, type ExportFormat } from './request-log-query';
import { RequestLogWriter } from './request-log-writer';
import { RequestLogUpkeep } from './request-log-upkeep';

export interface RequestLogPage {
  rows: RequestLogRow[];
  hasNextPage: boolean;
  endCursor: string | null;
}

/** Rows an export reads at a time: its memory, whatever the range. */
export const EXPORT_CHUNK_ROWS = 1000;

export class RequestLog {
  /**
   * The log over `repository`, with its writer on `clock`; `report` hears, for the operator, of a
   * batch not written (tried again), rows dropped (the writer full), an upkeep pass that failed.
   */
  static open(
    repository: RequestLogRepository,
    clock: Clock,
    days: number,
    report: (message: string, detail: { err?: string; count?: number }) => void,
  ): RequestLog {
    const writer = new RequestLogWriter(repository, {
      clock,
      onError: (err) => report('request log: rows not written; tried again', { err: String(err) }),
      onDropped: (count) => report('request log: rows dropped (the writer was full, or the database refused their batch)', { count }),
    });
    const upkeepFailed = (err: unknown) => report('request log: partition upkeep failed; tried again within the hour', { err: String(err) });
    return new RequestLog(repository, writer, clock, days, upkeepFailed);
  }

  /**
   * Whether calls are logged now: with the log on (REQUEST_LOG_DAYS above 0) unless turned off
   * while the process runs, as the bench does to measure what the log costs.
   */
  recording: boolean;
  private readonly upkeep: RequestLogUpkeep;

  constructor(
    private readonly repository: RequestLogRepository,
    private readonly writer: RequestLogWriter,
    private readonly clock: Clock,
    /** REQUEST_LOG_DAYS: how long rows are kept; 0, the log is off. */
    readonly days: number,
    onUpkeepError: (err: unknown) => void = () => undefined,
  ) {
    this.recording = days > 0;
    this.upkeep = new RequestLogUpkeep(repository, clock, days, onUpkeepError);
  }

  /** The row of a call whose key is authenticated (`requestId`: its x-request-id), or none while the log is not recording. */
  begin(requestId: string, accountId: string, keyId: string, endpoint: string, idempotencyKey: string | null): CallLog | undefined {
    if (!this.recording) return undefined;
    return new CallLog(requestId, this.clock.now(), accountId, keyId, endpoint, idempotencyKey, this.clock, this.write);
  }

  private readonly write = (row: RequestLogRow): void => this.writer.add(row);

  /** The account's rows, newest first (`{ keyId, model, status, from, to, first, after }`, none null). */
  async list(accountId: string, input: Record<string, unknown>): Promise<RequestLogPage> {
    const q = readListQuery(input);
    const rows = await this.repository.page(accountId, q.filter, q.first + 1, q.after);
    const page = rows.slice(0, q.first);
    const last = page.at(-1);
    return { rows: page, hasNextPage: rows.length > q.first, endCursor: last ? encodeCursor(last) : null };
  }

  /**
   * The account's rows that match, newest first, in chunks of EXPORT_CHUNK_ROWS read one after
   * the other (keyset paging): the input is checked before the first read, so a refusal is an
   * ordinary error; each chunk is read only when the one before it has been taken, so an export
   * holds one chunk however long its range and however slowly it is read.
   */
  export(accountId: string, input: Record<string, unknown>): { format: ExportFormat; chunks: AsyncGenerator<RequestLogRow[]> } {
    const q = readExportQuery(input);
    return { format: q.format, chunks: this.chunks(accountId, q.filter) };
  }

  private async *chunks(accountId: string, filter: Parameters<RequestLogRepository['page']>[1]): AsyncGenerator<RequestLogRow[]> {
    let after: { createdMs: number; id: string } | undefined;
    for (;;) {
      const rows = await this.repository.page(accountId, filter, EXPORT_CHUNK_ROWS, after);
      if (rows.length > 0) yield rows;
      if (rows.length < EXPORT_CHUNK_ROWS) return;
      const last = rows[rows.length - 1];
      after = { createdMs: last.createdMs, id: last.id };
    }
  }

  /** Starts the writer and the partitions' upkeep (its first pass awaited, so today's partition is there). */
  async start(): Promise<void> {
    this.writer.start();
    await this.upkeep.start();
  }

  /** Writes what waits; the upkeep stops. */
  async stop(): Promise<void> {
    this.upkeep.stop();
    await this.writer.stop();
  }

  /** Writes the rows waiting in the writer now (tests, shutdown). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** One pass of the partitions' upkeep now. */
  keepPartitions(): ReturnType<RequestLogUpkeep['pass']> {
    return this.upkeep.pass();
  }
}
