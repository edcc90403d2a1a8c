/**
 * A key's budgets: at most one per UTC calendar period (a day; a week from Monday 00:00; a month
 * from the 1st), each a number of micro-credits the key's spend in that period may not pass. The
 * day's budget is the key's `dailySpendCap`. A lease counts whole against every budget of its key
 * until it closes, as against the daily cap (money.md).
 */
import { DomainError } from '../errors/domain-error';

export const BUDGET_PERIODS = ['day', 'week', 'month'] as const;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];

/** Micro-credits per period; null: no budget for that period. */
export interface Budgets {
  day: number | null;
  week: number | null;
  month: number | null;
}

export const NO_BUDGETS: Budgets = { day: null, week: null, month: null };

export const sameBudgets = (a: Budgets, b: Budgets): boolean => a.day === b.day && a.week === b.week && a.month === b.month;

/** The first instant of the UTC period that holds `at`. */
export function periodStart(period: BudgetPeriod, at: Date): Date {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  const d = at.getUTCDate();
  if (period === 'day') return new Date(Date.UTC(y, m, d));
  if (period === 'month') return new Date(Date.UTC(y, m, 1));
  // getUTCDay: 0 is Sunday; a week starts on Monday.
  return new Date(Date.UTC(y, m, d - ((at.getUTCDay() + 6) % 7)));
}

/** The first instant of the next UTC period after the one that holds `at`: when its spend starts again from 0. */
export function periodEnd(period: BudgetPeriod, at: Date): Date {
  const start = periodStart(period, at);
  const y = start.getUTCFullYear();
  const m = start.getUTCMonth();
  const d = start.getUTCDate();
  if (period === 'day') return new Date(Date.UTC(y, m, d + 1));
  if (period === 'week') return new Date(Date.UTC(y, m, d + 7));
  return new Date(Date.UTC(y, m + 1, 1));
}

/** Whole seconds from `at` to the period's end, at least 1 (a Retry-After). */
export const secondsUntilPeriodEnd = (period: BudgetPeriod, at: Date): number =>
  Math.max(1, Math.ceil((periodEnd(period, at).getTime() - at.getTime()) / 1000));

/** The day keeps the daily cap's answer; a week or a month answers `budget_exceeded`. Both 429, Retry-After to the period's end. */
export function budgetExceeded(period: BudgetPeriod, now: Date): DomainError {
  const retryAfterSeconds = secondsUntilPeriodEnd(period, now);
  if (period === 'day') return new DomainError('daily_cap_exceeded', 'This request would pass the daily spend cap of this API key.', { retryAfterSeconds });
  return new DomainError('budget_exceeded', `This request would pass the ${period === 'week' ? 'weekly' : 'monthly'} budget of this API key.`, {
    code: `${period}_budget`,
    retryAfterSeconds,
  });
}
