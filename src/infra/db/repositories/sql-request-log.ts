/**
 * The request log's SQL: `request_log`, partitioned by UTC day. Rows are written by
 * svc_log_requests (which the charge paths call too) and partitions kept by
 * svc_request_log_partitions; reads go newest first through each partition's
 * primary key, (account_id, created, id), read backwards, a time range pruning the partitions read.
 */
import type { Database } from '../../../domain/ports/database';
import type { RequestLogRow } from '../../../domain/requests/call-log';
import type { PartitionUpkeep, RequestLogCursor, RequestLogFilter, RequestLogRepository } from '../../../domain/requests/request-log-repository';
import { loggedCallsJson } from './charge-items-json';

interface Row {
  id: string;
  created_ms: string | number;
  account_id: string;
  api_key_id: string;
  model: string;
  endpoint: string;
  status: number;
  credits_micro: string | number;
  prompt_tokens: number;
  completion_tokens: number;
  images: number;
  seconds: number;
  latency_ms: number;
  idempotency_key: string | null;
  error_type: string | null;
  error_code: string | null;
  job_id: string | null;
}

const COLUMNS = `id, (extract(epoch from created) * 1000)::bigint as created_ms, account_id, api_key_id, model, endpoint, status, credits_micro,
  prompt_tokens, completion_tokens, images, seconds, latency_ms, idempotency_key, error_type, error_code, job_id`;

const toRow = (r: Row): RequestLogRow => ({
  id: r.id,
  createdMs: Number(r.created_ms),
  accountId: r.account_id,
  keyId: r.api_key_id,
  model: r.model,
  endpoint: r.endpoint,
  idempotencyKey: r.idempotency_key,
  status: Number(r.status),
  creditsMicro: Number(r.credits_micro),
  promptTokens: Number(r.prompt_tokens),
  completionTokens: Number(r.completion_tokens),
  images: Number(r.images),
  seconds: Number(r.seconds),
  latencyMs: Number(r.latency_ms),
  errorType: r.error_type,
  errorCode: r.error_code,
  jobId: r.job_id,
});

const at = (ms: number) => new Date(ms).toISOString();

export class SqlRequestLog implements RequestLogRepository {
  constructor(private readonly db: Database) {}

  async insert(rows: readonly RequestLogRow[]): Promise<void> {
    await this.db.one(`select svc_log_requests(?::jsonb) as written`, [loggedCallsJson(rows)]);
  }

  async page(accountId: string, filter: RequestLogFilter, limit: number, after?: RequestLogCursor): Promise<RequestLogRow[]> {
    const where = ['account_id = ?'];
    const params: unknown[] = [accountId];
    const and = (condition: string, ...values: unknown[]) => {
      where.push(condition);
      params.push(...values);
    };
    if (filter.keyId !== undefined) and('api_key_id = ?', filter.keyId);
    if (filter.model !== undefined) and('model = ?', filter.model);
    if (filter.status !== undefined) and('status = ?', filter.status);
    if (filter.outcome !== undefined) and(filter.outcome === 'ok' ? 'status < 400' : 'status >= 400');
    if (filter.fromMs !== undefined) and('created >= ?::timestamptz', at(filter.fromMs));
    if (filter.toMs !== undefined) and('created <= ?::timestamptz', at(filter.toMs));
    // The row comparison walks the index; the plain bound lets the planner skip newer partitions.
    if (after) and('created <= ?::timestamptz and (created, id) < (?::timestamptz, ?)', at(after.createdMs), at(after.createdMs), after.id);
    params.push(limit);
    // Walked through the index, newest first, whatever the statistics say: a day's partition is
    // read before anything has analysed it (the embedded database never does), and a plan that
    // sorts every row of a large account for each page made an export quadratic.
    const rows = await this.db.transaction(async (tx) => {
      await tx.one(`select set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true)`);
      return tx.all<Row>(`select ${COLUMNS} from request_log where ${where.join(' and ')} order by created desc, id desc limit ?`, params);
    });
    return rows.map(toRow);
  }

  async keepPartitions(today: string, daysAhead: number, keepDays: number): Promise<PartitionUpkeep> {
    const row = await this.db.one<{ partitions_made: number; partitions_dropped: number; rows_moved: string | number }>(
      `select * from svc_request_log_partitions(?::date, ?, ?)`,
      [today, daysAhead, keepDays],
    );
    return { made: Number(row?.partitions_made ?? 0), dropped: Number(row?.partitions_dropped ?? 0), moved: Number(row?.rows_moved ?? 0) };
  }
}
