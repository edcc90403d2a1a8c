import type { SqlExecutor } from '../../../src/domain/ports/database';
import type { AccountEvent } from '../../../src/domain/webhooks/account-events';
import type { DeliveryAttemptEntry, DeliveryFilter, DeliveryRecord } from '../../../src/domain/webhooks/delivery-log';
import type { WebhookRepository, WebhookTarget } from '../../../src/domain/webhooks/webhook-repository';
import { FakeRows, type FakeDatabase } from './fake-database';

/**
 * Webhook targets by key and by account, and the delivery log, in memory. A test sets a key's
 * target (or clears it, as a revocation does), or an account's.
 */
export class FakeWebhookRepository implements WebhookRepository {
  private readonly targets = new FakeRows<string, WebhookTarget>();
  private readonly accountTargets = new FakeRows<string, WebhookTarget>();
  /** Account events by id; their deliveries are the database's (svc_account_event), not scheduled here. */
  readonly accountEvents = new FakeRows<string, AccountEvent>();
  private readonly log = new FakeRows<number, DeliveryAttemptEntry & { created: number }>();

  constructor(private readonly db: FakeDatabase) {
    db.table(this.targets);
    db.table(this.accountTargets);
    db.table(this.accountEvents);
    db.table(this.log);
  }

  setTarget(keyId: string, target: WebhookTarget | undefined): void {
    if (target) this.targets.rows.set(keyId, target);
    else this.targets.rows.delete(keyId);
  }

  setAccountTarget(accountId: string, target: WebhookTarget | undefined): void {
    if (target) this.accountTargets.rows.set(accountId, target);
    else this.accountTargets.rows.delete(accountId);
  }

  /** Every attempt logged, oldest first. */
  get attempts(): DeliveryAttemptEntry[] {
    return [...this.log.rows.values()].map(({ created: _created, ...a }) => a);
  }

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async target(keyId: string, tx?: SqlExecutor): Promise<WebhookTarget | undefined> {
    this.db.maybeInTransaction(tx);
    const t = this.targets.rows.get(keyId);
    return t && { ...t };
  }

  async accountTarget(accountId: string): Promise<WebhookTarget | undefined> {
    const t = this.accountTargets.rows.get(accountId);
    return t && { ...t };
  }

  async recordAccountEvent(tx: SqlExecutor, event: AccountEvent): Promise<string | null> {
    this.db.inTransaction(tx);
    const id = `evt_${event.accountId}/${event.type}/${event.occurrence}`;
    if (this.accountEvents.rows.has(id)) return null;
    this.accountEvents.rows.set(id, event);
    return id;
  }

  async logAttempt(tx: SqlExecutor, attempt: DeliveryAttemptEntry): Promise<void> {
    this.db.inTransaction(tx);
    this.log.rows.set(this.log.rows.size + 1, { ...attempt, created: Math.floor(this.db.nowMs / 1000) });
  }

  async listDeliveries(filter: DeliveryFilter): Promise<DeliveryRecord[]> {
    return [...this.log.rows.values()]
      .filter(
        (a) =>
          (!filter.keyId || a.keyId === filter.keyId) &&
          (!filter.accountId || a.accountId === filter.accountId) &&
          (!filter.jobId || a.jobId === filter.jobId) &&
          (!filter.accountEvents || a.keyId === null),
      )
      .reverse()
      .slice(0, filter.limit)
      .map((a) => ({
        eventId: a.eventId,
        eventType: a.event,
        deliveryId: a.deliveryId,
        attempt: a.attempt,
        statusCode: a.statusCode,
        error: a.error,
        durationMs: a.durationMs,
        created: a.created,
      }));
  }
}
