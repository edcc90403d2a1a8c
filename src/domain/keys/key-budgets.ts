/**
 * A key's budgets as a request sets them: `budgets: [{ period, credits }]`, at most one per period,
 * replaces the key's budgets; `dailySpendCap` is the `day` budget by another name. A request
 * may send both only when they agree on the day.
 */
import { z } from 'zod';
import { BUDGET_PERIODS } from '../credits/budgets';
import { invalidField } from '../errors/domain-error';
import { creditAmount } from '../shared/credit-amount';
import type { KeyChanges } from './key-repository';

/** Credits per period, parsed into exact micro-credits (the daily cap's bounds). */
const credits = () => creditAmount({ sign: 'positive', max: 1e9 });

/** Credits per UTC day, parsed into exact micro-credits (null clears the cap). */
export const dailySpendCapField = credits().nullable().optional();

/** The budgets, each period at most once (null or [] clears them all). */
export const budgetsField = z
  .array(z.object({ period: z.enum(BUDGET_PERIODS), credits: credits() }).strict())
  .max(BUDGET_PERIODS.length)
  .superRefine((list, ctx) => {
    list.forEach((b, i) => {
      if (list.findIndex((o) => o.period === b.period) < i)
        ctx.addIssue({ code: 'custom', path: [i, 'period'], message: `names '${b.period}' again: a key has at most one budget per period` });
    });
  })
  .nullable()
  .optional();

type BudgetColumns = Pick<KeyChanges, 'dailySpendCapMicro' | 'weekBudgetMicro' | 'monthBudgetMicro'>;

/**
 * What the parsed `dailySpendCap` and `budgets` set, the fields the request sent (`sent`) and no
 * other: `budgets` sets all three periods, `dailySpendCap` the day. Both naming different days is
 * a 400 naming `dailySpendCap`.
 */
export function budgetChanges(
  v: { dailySpendCap?: number | null; budgets?: Array<{ period: (typeof BUDGET_PERIODS)[number]; credits: number }> | null },
  sent: { dailySpendCap: boolean; budgets: boolean },
): BudgetColumns {
  const changes: BudgetColumns = {};
  if (sent.budgets) {
    const of = (period: string) => v.budgets?.find((b) => b.period === period)?.credits ?? null;
    const day = v.budgets?.find((b) => b.period === 'day');
    if (sent.dailySpendCap && day && (v.dailySpendCap ?? null) !== day.credits) {
      throw invalidField(['dailySpendCap'], "differs from the 'day' budget in 'budgets', which it is: send one of the two, or the same credits in both.");
    }
    changes.dailySpendCapMicro = day ? day.credits : sent.dailySpendCap ? (v.dailySpendCap ?? null) : null;
    changes.weekBudgetMicro = of('week');
    changes.monthBudgetMicro = of('month');
  } else if (sent.dailySpendCap) {
    changes.dailySpendCapMicro = v.dailySpendCap ?? null;
  }
  return changes;
}
