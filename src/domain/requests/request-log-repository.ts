/**
 * Where the request log is stored: `request_log`, partitioned by UTC day. Its SQL:
 * infra/db/repositories/sql-request-log.ts (rows are written by svc_log_requests, partitions
 * kept by svc_request_log_partitions).
 */
import type { RequestLogRow } from './call-log';

export type RequestOutcome = 'ok' | 'error';

/** Which of an account's rows a read wants; every bound optional, `fromMs` and `toMs` both included. */
export interface RequestLogFilter {
  keyId?: string;
  model?: string;
  status?: number;
  /** `ok`: answered below 400; `error`: 400 and above (499 included). */
  outcome?: RequestOutcome;
  fromMs?: number;
  toMs?: number;
}

/** Where a newest-first read goes on: the rows older than this one. */
export interface RequestLogCursor {
  createdMs: number;
  id: string;
}

export interface PartitionUpkeep {
  made: number;
  dropped: number;
  moved: number;
}

export interface RequestLogRepository {
  /** Writes rows no charge carried, idempotently (a row is its account, its time and its id). */
  insert(rows: readonly RequestLogRow[]): Promise<void>;
  /** The account's rows that match, newest first (by created, then id), at most `limit`, older than `after` when given. */
  page(accountId: string, filter: RequestLogFilter, limit: number, after?: RequestLogCursor): Promise<RequestLogRow[]>;
  /**
   * The partitions of `today` (YYYY-MM-DD, UTC) and the `daysAhead` days after it made, those of
   * days before `today - keepDays` dropped (all of them when `keepDays` is 0).
   */
  keepPartitions(today: string, daysAhead: number, keepDays: number): Promise<PartitionUpkeep>;
}
