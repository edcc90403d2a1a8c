import { PageRule } from '../shared/page-rule';
import type { SqlExecutor } from '../ports/database';
import { unixSeconds } from '../shared/time';

export interface DeliveryRecord {
  eventId: string;
  deliveryId: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  created: number;
}

interface Row {
  event_id: string;
  delivery_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: Date;
}

const toRecord = (r: Row): DeliveryRecord => ({
  eventId: r.event_id,
  deliveryId: r.delivery_id,
  attempt: r.attempt,
  statusCode: r.status_code,
  error: r.error,
  durationMs: r.duration_ms,
  created: unixSeconds(new Date(r.created_at)),
});

export async function logAttempt(
  tx: SqlExecutor,
  a: {
    deliveryId: string;
    eventId: string;
    keyId: string;
    accountId: string;
    jobId: string;
    attempt: number;
    statusCode: number | null;
    error: string | null;
    durationMs: number;
  },
): Promise<void> {
  await tx.run(
    `insert into webhook_deliveries (delivery_id, event_id, api_key_id, account_id, job_id, attempt, status_code, error, duration_ms)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [a.deliveryId, a.eventId, a.keyId, a.accountId, a.jobId, a.attempt, a.statusCode, a.error, a.durationMs],
  );
}

/** A delivery log's page: 100 newest by default, 500 at most (no cursor). */
export const DELIVERY_PAGE = new PageRule(500, 100);
/** Newest first, filtered by key (and account, for owners) and/or job (operators). */
export async function listDeliveries(
  tx: SqlExecutor,
  filter: { keyId?: string; accountId?: string; jobId?: string; limit?: number },
): Promise<DeliveryRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const and = (clause: string, value: unknown) => {
    where.push(clause);
    params.push(value);
  };
  if (filter.keyId) and('api_key_id = ?', filter.keyId);
  if (filter.accountId) and('account_id = ?', filter.accountId);
  if (filter.jobId) and('job_id = ?', filter.jobId);
  params.push(filter.limit ?? DELIVERY_PAGE.byDefault);
  const rows = await tx.all<Row>(
    `select event_id, delivery_id, attempt, status_code, error, duration_ms, created_at from webhook_deliveries
     ${where.length ? `where ${where.join(' and ')}` : ''} order by id desc limit ?`,
    params,
  );
  return rows.map(toRecord);
}
