import type { Database, SqlExecutor } from '../../../domain/ports/database';
import type { AccountEvent } from '../../../domain/webhooks/account-events';
import type { DeliveryAttemptEntry, DeliveryFilter, DeliveryRecord } from '../../../domain/webhooks/delivery-log';
import type { WebhookRepository, WebhookTarget } from '../../../domain/webhooks/webhook-repository';
import { unixSeconds } from '../../../domain/shared/time';

interface Row {
  event_id: string;
  event_type: string;
  delivery_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  created_at: Date;
}

const toRecord = (r: Row): DeliveryRecord => ({
  eventId: r.event_id,
  eventType: r.event_type,
  deliveryId: r.delivery_id,
  attempt: r.attempt,
  statusCode: r.status_code,
  error: r.error,
  durationMs: r.duration_ms,
  created: unixSeconds(new Date(r.created_at)),
});

/** Webhook targets (on `api_keys`, and `account_alerts` for accounts) and the delivery log (`webhook_deliveries`). */
export class SqlWebhookRepository implements WebhookRepository {
  constructor(private readonly db: Database) {}

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async target(keyId: string, tx: SqlExecutor = this.db): Promise<WebhookTarget | undefined> {
    const key = await tx.one<{ webhook_url: string | null; webhook_secret: string | null }>(
      `select webhook_url, webhook_secret from api_keys where id = ? and revoked_at is null`,
      [keyId],
    );
    return key?.webhook_url && key.webhook_secret ? { url: key.webhook_url, secret: key.webhook_secret } : undefined;
  }

  async accountTarget(accountId: string): Promise<WebhookTarget | undefined> {
    const row = await this.db.one<{ webhook_url: string | null; webhook_secret: string | null }>(
      `select webhook_url, webhook_secret from account_alerts where account_id = ?`,
      [accountId],
    );
    return row?.webhook_url && row.webhook_secret ? { url: row.webhook_url, secret: row.webhook_secret } : undefined;
  }

  async recordAccountEvent(tx: SqlExecutor, e: AccountEvent): Promise<string | null> {
    const row = await tx.one<{ id: string | null }>(`select svc_account_event(?, ?, ?, ?::jsonb) as id`, [
      e.accountId,
      e.type,
      e.occurrence,
      JSON.stringify(e.data),
    ]);
    return row?.id ?? null;
  }

  async logAttempt(tx: SqlExecutor, a: DeliveryAttemptEntry): Promise<void> {
    await tx.run(
      `insert into webhook_deliveries (delivery_id, event_id, event_type, api_key_id, account_id, job_id, attempt, status_code, error, duration_ms)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [a.deliveryId, a.eventId, a.event, a.keyId, a.accountId, a.jobId, a.attempt, a.statusCode, a.error, a.durationMs],
    );
  }

  async listDeliveries(filter: DeliveryFilter): Promise<DeliveryRecord[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    const and = (clause: string, value: unknown) => {
      where.push(clause);
      params.push(value);
    };
    if (filter.keyId) and('api_key_id = ?', filter.keyId);
    if (filter.accountId) and('account_id = ?', filter.accountId);
    if (filter.jobId) and('job_id = ?', filter.jobId);
    if (filter.accountEvents) where.push('api_key_id is null');
    params.push(filter.limit);
    const rows = await this.db.all<Row>(
      `select event_id, event_type, delivery_id, attempt, status_code, error, duration_ms, created_at from webhook_deliveries
     ${where.length ? `where ${where.join(' and ')}` : ''} order by id desc limit ?`,
      params,
    );
    return rows.map(toRecord);
  }
}
