import type { BudgetPeriod } from '../gql/graphql';
import { parseCredits } from '../credit-input';

/**
 * Fields a key's create and edit forms share: its expiry, typed as a UTC date and time (the
 * console shows every time in UTC), and its budgets per period.
 */

/** An RFC 3339 time as a datetime-local field holds it, in UTC ('' for none). */
export const expiryText = (iso: string | null | undefined): string => (iso ? new Date(iso).toISOString().slice(0, 16) : '');

/** A datetime-local field's text (UTC) as the RFC 3339 time the gateway takes; '' → null (never). */
export const expiryValue = (text: string): string | null => (text ? new Date(`${text}:00Z`).toISOString() : null);

export function ExpiryField({ id, value, onChange }: { id: string; value: string; onChange: (text: string) => void }) {
  return (
    <div class="field">
      <label for={id}>Expires at (UTC; empty: never)</label>
      <div class="row">
        <input id={id} type="datetime-local" step={60} value={value} aria-describedby={`${id}-hint`} onInput={(e) => onChange(e.currentTarget.value)} />
        <button type="button" class="secondary" disabled={value === ''} onClick={() => onChange('')}>
          Never expires
        </button>
      </div>
      <p class="hint" id={`${id}-hint`}>
        From then on the key is refused; its owner is told 7 days and 1 day before.
      </p>
    </div>
  );
}

export type BudgetTexts = Record<BudgetPeriod, string>;

const BUDGET_FIELDS: Array<{ period: BudgetPeriod; label: string; what: string }> = [
  { period: 'DAY', label: 'Daily spend cap (credits; empty: none)', what: 'The daily cap' },
  { period: 'WEEK', label: 'Weekly budget (credits, from Monday; empty: none)', what: 'The weekly budget' },
  { period: 'MONTH', label: 'Monthly budget (credits, from the 1st; empty: none)', what: 'The monthly budget' },
];

/** The three budgets of a live key; the day's is its daily cap. Periods are UTC. */
export function BudgetFields({ id, value, onChange }: { id: string; value: BudgetTexts; onChange: (next: BudgetTexts) => void }) {
  return (
    <fieldset class="field wide">
      <legend>Budgets per period (UTC)</legend>
      <div class="budget-fields">
        {BUDGET_FIELDS.map((f) => (
          <div class="field">
            <label for={`${f.period.toLowerCase()}-${id}`}>{f.label}</label>
            <input
              id={`${f.period.toLowerCase()}-${id}`}
              inputMode="decimal"
              value={value[f.period]}
              onInput={(e) => onChange({ ...value, [f.period]: e.currentTarget.value })}
            />
          </div>
        ))}
      </div>
    </fieldset>
  );
}

/** The budgets as the gateway takes them (only the periods filled in), or the first field's refusal. */
export function parseBudgets(texts: BudgetTexts): { budgets: Array<{ period: BudgetPeriod; credits: number }> } | { error: string } {
  const budgets: Array<{ period: BudgetPeriod; credits: number }> = [];
  for (const f of BUDGET_FIELDS) {
    const parsed = parseCredits(texts[f.period], f.what);
    if ('error' in parsed) return parsed;
    if (parsed.credits !== null) budgets.push({ period: f.period, credits: parsed.credits });
  }
  return { budgets };
}
