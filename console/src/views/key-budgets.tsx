import { credits, when } from '../ui';
import type { KeyRecord } from './key-edit';

const PERIOD_NAMES: Record<string, string> = { DAY: 'Today', WEEK: 'This week', MONTH: 'This month' };

/** Each budget of a key: what its period spent, as a bar and in credits, and when it starts again. */
export function KeyBudgets({ apiKey }: { apiKey: KeyRecord }) {
  if (apiKey.budgets.length === 0) return null;
  return (
    <ul class="budgets" aria-label={`Budgets of ${apiKey.name}`}>
      {apiKey.budgets.map((b) => {
        const name = PERIOD_NAMES[b.period] ?? b.period;
        const share = b.credits > 0 ? Math.min(1, b.spent / b.credits) : 0;
        return (
          <li key={b.period} data-period={b.period}>
            <div class="row spread">
              <span>{name}</span>
              <span class="num">
                {b.spent.toLocaleString('en-US', { maximumFractionDigits: 6 })} of {credits(b.credits)}
              </span>
            </div>
            <progress
              max={1}
              value={share}
              aria-label={`${name}: ${Math.round(share * 100)}% of the budget spent`}
              class={share >= 1 ? 'full' : share >= 0.8 ? 'high' : ''}
            />
            <span class="hint">
              Resets <time dateTime={b.resetsAt}>{when(b.resetsAt)}</time>
            </span>
          </li>
        );
      })}
    </ul>
  );
}
