/**
 * An account's events, sent to its own webhook (PATCH /account/webhook) in one envelope:
 * `{ id, type, created, data }`, with the headers and signature of a key's events. Each is
 * recorded once, in the transaction of what caused it, through the account events' outbox
 * (svc_account_event): the same `occurrence` recorded again (a retry, a second instance) is
 * nothing new, and keeps its id.
 *
 * | type | occurrence (what makes it once) | recorded by |
 * |---|---|---|
 * | `balance.low` | the crossing's number | svc_balance_alert, where the money moves |
 * | `key.budget_threshold` | key, period, period start, percent (80, 100) | where the spend is counted |
 * | `key.expiring` | key, `expiresAt`, days before it (7, 1) | a work row due then |
 * | `purchase.completed` | the checkout session | the grant of the purchase |
 */
export type AccountEventType = 'balance.low' | 'key.budget_threshold' | 'key.expiring' | 'purchase.completed';

export interface AccountEvent {
  accountId: string;
  type: AccountEventType;
  occurrence: string;
  /** The envelope's `data`: credits as numbers, ids and times as the API shows them (`…At` fields RFC 3339). */
  data: Record<string, unknown>;
}
