/**
 * When a key's spend in a budget's period crosses 80% or 100% of the budget: what an alert
 * (`key.budget_threshold`, `data.percent`) is made from. Spend here is the key's committed
 * charges in the period (what GET /v1/key shows as `spent`), not its leases counted whole.
 *
 * The database finds each crossing where the money moves, in the transaction that moves it, and
 * writes it once (key_budget_notices, one row per key, period, period start, budget and
 * percent) with the account's `key.budget_threshold` event (svc_account_event, once per key,
 * period, period start and percent): svc_note_budget_crossings is the one place that looks,
 * called by
 * - svc_record_charges, for a charge within a watched lease (one taken with the key's spend,
 *   leases counted whole, at 80% of a budget or more: only such a lease can carry the key's
 *   committed spend across a threshold, so the others cost the charge path nothing) and for
 *   what a charge takes from the balance beyond its lease; the crossings it finds are answered
 *   with that charge (ChargeOutcome.crossings);
 * - svc_charge, after a charge straight to the balance (a video job's);
 * - svc_close_lease, after every close of a key with a budget: a crossing made within an older
 *   lease that was not watched (several instances each holding a lease of the key) is told then.
 */
import type { BudgetPeriod } from './budgets';

/** The thresholds, in percent of a budget. */
export const BUDGET_THRESHOLDS = [80, 100] as const;
export type BudgetThreshold = (typeof BUDGET_THRESHOLDS)[number];

export interface BudgetCrossing {
  keyId: string;
  period: BudgetPeriod;
  /** The period's first day (YYYY-MM-DD, UTC): with the key, the budget and the percent, what makes the crossing one. */
  periodStart: string;
  percent: BudgetThreshold;
  budgetMicro: number;
  /** The key's committed spend in the period when the crossing was found. */
  spentMicro: number;
}
