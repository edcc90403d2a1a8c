/** The purchases' side in the database. Its SQL: infra/db/repositories/sql-purchases.ts. */
import type { SqlExecutor } from '../ports/database';
import type { Purchase, PurchaseStatus } from './purchase';

/** A purchase's refund state, read with its row locked. */
export interface RefundState {
  id: string;
  accountId: string;
  creditsMicro: number;
  /** What refunds have taken back so far, and what they could not (the balance was spent). */
  takenBackMicro: number;
  shortfallMicro: number;
  refundedCents: number;
}

export interface PurchaseRepository {
  /** Runs `work` in one transaction: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** A purchase whose checkout was made, `pending`; a session recorded before is left as it is. */
  recordPending(purchase: { id: string; accountId: string; creditsMicro: number; amountCents: number }): Promise<void>;
  /**
   * Moves the purchase `id` of `accountId` from `pending` to `completed` with its payment, in `tx`,
   * holding its row until `tx` ends; a purchase not recorded yet is recorded first (from the
   * event), when the account exists. Answers what it grants, or null when it is not this call's
   * to grant: completed already, or no such purchase of that account.
   */
  claimCompletion(
    tx: SqlExecutor,
    purchase: { id: string; accountId: string; creditsMicro: number; amountCents: number; paymentIntent: string | null },
  ): Promise<{ creditsMicro: number; amountCents: number } | null>;
  /** Moves a `pending` purchase to `expired` or `failed`; answers its account when it moved. */
  close(id: string, status: 'expired' | 'failed'): Promise<string | undefined>;
  /** The account of the purchase paid by `paymentIntent`, or undefined. */
  accountOfPayment(paymentIntent: string): Promise<string | undefined>;
  /** The purchase paid by `paymentIntent`, its row locked in `tx`. */
  lockForRefund(tx: SqlExecutor, paymentIntent: string): Promise<RefundState | undefined>;
  /** Writes a refund's outcome on the purchase, in `tx`. */
  recordRefund(
    tx: SqlExecutor,
    refund: { id: string; refundedCents: number; takenBackMicro: number; shortfallMicro: number; status: PurchaseStatus },
  ): Promise<void>;
  /** The purchase `id` of `accountId`, or undefined (none, or another account's). */
  find(accountId: string, id: string): Promise<Purchase | undefined>;
  /** The account's purchases, newest first, those after the purchase `after` when given. */
  list(accountId: string, page: { first: number; after?: string }): Promise<Purchase[]>;
}
