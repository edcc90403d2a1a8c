import { useEffect, useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { SetLowBalanceAlertMutation } from '../api/account-operations';
import { creditsText, parseCredits } from '../credit-input';
import { ErrorNote, credits, useOneAtATime } from '../ui';

/** The low-balance alert: a balance falling below the threshold sends balance.low to the account webhook, once per crossing. */
export function LowBalanceForm({ token, threshold, onSaved }: { token: Bearer; threshold: number | null; onSaved: () => void }) {
  const [text, setText] = useState(creditsText(threshold));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const { busy, once } = useOneAtATime();
  useEffect(() => setText(creditsText(threshold)), [threshold]);

  const store = (value: number | null) =>
    once(async () => {
      setError(null);
      setSaved(null);
      try {
        const { setLowBalanceAlert } = await execute(token, SetLowBalanceAlertMutation, { lowBalanceAlert: value });
        const now = setLowBalanceAlert.lowBalanceAlert ?? null;
        setSaved(now === null ? 'Saved: no low-balance alert.' : `Saved: an alert when the balance falls below ${credits(now)}.`);
        onSaved();
      } catch (err) {
        setError(describeError(err));
      }
    });
  const save = (e: Event) => {
    e.preventDefault();
    const parsed = parseCredits(text, 'The low-balance threshold');
    if ('error' in parsed) return setError(parsed.error);
    return store(parsed.credits);
  };

  return (
    <form onSubmit={save} onInput={() => setSaved(null)} class="grid" aria-label="Low-balance alert">
      <div class="field">
        <label for="low-balance">Alert below (credits; empty: no alert)</label>
        <input id="low-balance" inputMode="decimal" value={text} aria-describedby="low-balance-hint" onInput={(e) => setText(e.currentTarget.value)} />
        <p class="hint" id="low-balance-hint">
          When the balance falls below it, <span class="mono">balance.low</span> goes to the account webhook, once per crossing.
        </p>
      </div>
      <div class="row">
        <button type="submit" disabled={busy}>
          Save threshold
        </button>
        {threshold !== null && (
          <button type="button" class="secondary" disabled={busy} onClick={() => store(null)}>
            Clear threshold
          </button>
        )}
      </div>
      <ErrorNote message={error} />
      {saved && <p role="status">{saved}</p>}
    </form>
  );
}
