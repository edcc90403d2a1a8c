import type { SqlExecutor } from '../ports/database';
import type { AccountEvent } from './account-events';
import type { DeliveryAttemptEntry, DeliveryFilter, DeliveryRecord } from './delivery-log';

/** Where a webhook (a key's, or the account's) goes now, and the secret it is signed with. */
export interface WebhookTarget {
  url: string;
  secret: string;
}

/** Webhook targets and the delivery log, stored. Its SQL: infra/db/repositories/sql-webhooks.ts. */
export interface WebhookRepository {
  /** Runs `work` in one transaction: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** The webhook of an unrevoked key; none when it has none set or was revoked. Read in `tx` when given. */
  target(keyId: string, tx?: SqlExecutor): Promise<WebhookTarget | undefined>;
  /** The account's own webhook; none when it has none set. */
  accountTarget(accountId: string): Promise<WebhookTarget | undefined>;
  /**
   * Records an account event in `tx` and, when the account has a webhook, its first delivery
   * attempt (svc_account_event). Answers the event's id, or null when its occurrence was recorded before.
   */
  recordAccountEvent(tx: SqlExecutor, event: AccountEvent): Promise<string | null>;
  logAttempt(tx: SqlExecutor, attempt: DeliveryAttemptEntry): Promise<void>;
  listDeliveries(filter: DeliveryFilter): Promise<DeliveryRecord[]>;
}
