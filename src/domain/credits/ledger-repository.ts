/**
 * The ledger's side in the database: each operation is one call of the SQL function that holds
 * its money rule (src/infra/db/functions), run in the transaction it is given, so a charge
 * commits or rolls back with the job and work rows it pays for.
 */
import type { SqlExecutor } from '../ports/database';
import type { BudgetPeriod, Budgets } from './budgets';

/**
 * What kept a debit from being made: the balance does not cover it, or one of the key's budgets
 * does not (the day's is its daily cap); of several budgets short, the one whose period ends last.
 */
export type Shortfall = 'balance' | 'daily_cap' | 'week_budget' | 'month_budget';

/** The budget period a shortfall names, or null for the balance. */
export const periodOfShortfall = (shortfall: Shortfall): BudgetPeriod | null =>
  shortfall === 'daily_cap' ? 'day' : shortfall === 'week_budget' ? 'week' : shortfall === 'month_budget' ? 'month' : null;

/** A debit of an account by one of its keys, within the key's budgets. */
export interface Debit {
  accountId: string;
  keyId: string;
  /** The key's budgets, in micro-credits. */
  budgets: Budgets;
  amountMicro: number;
  /** What is paid for: a job id, a hold id, an image request id. */
  reference: string;
  /** The public model id paid for; null when unknown. */
  model: string | null;
  /** The UTC day this instance's clock gives; the database counts on its own day. */
  day: string;
}

/** A grant of credits, or (negative) a removal of what the balance holds. */
export interface GrantInput {
  accountId: string;
  amountMicro: number;
  reason: string;
  /** What the entry is for (a purchase's Checkout Session); none for an operator's. */
  reference?: string | null;
}

export interface LedgerRepository {
  /** A charge in full; answers what kept it from being made, or null once it is made. */
  charge(tx: SqlExecutor, debit: Debit & { reason: string | null }): Promise<Shortfall | null>;
  /** Reverses the charge made under `reference`, once; answers whether this call reversed it. */
  refundOnce(tx: SqlExecutor, input: { accountId: string; reference: string; reason: string }): Promise<boolean>;
  /**
   * A grant (negative: a removal, never below zero); answers the amount applied. `reference`
   * names what it is for (a purchase's session); a positive grant is made at most once per reference.
   */
  grant(tx: SqlExecutor, input: GrantInput): Promise<number>;
  /** Takes what the balance holds now and notes the rest on the account's open leases. */
  removeCredits(tx: SqlExecutor, input: { accountId: string; amountMicro: number; reason: string }): Promise<{ takenMicro: number; pendingMicro: number }>;
  /**
   * A hold (a real debit) with the `hold_expiry` work row that releases it, due in
   * `expirySeconds` with `expiryPayload`; answers what kept it from being placed, or null.
   */
  placeHold(tx: SqlExecutor, hold: Debit & { expirySeconds: number; expiryPayload: unknown }): Promise<Shortfall | null>;
  /** Releases a hold and charges `actualMicro` of it, once; answers false when it was settled already. */
  settleHold(tx: SqlExecutor, input: { accountId: string; keyId: string; holdId: string; actualMicro: number }): Promise<boolean>;
}
