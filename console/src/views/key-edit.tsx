import { useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { UpdateApiKeyMutation } from '../api/operations';
import type { ApiKeysQuery, UpdateApiKeyInput } from '../gql/graphql';
import { creditsText } from '../credit-input';
import { ErrorNote, useOneAtATime } from '../ui';
import type { ModelRecord } from './models';
import { ModelPicker } from './model-picker';
import { BudgetFields, ExpiryField, expiryText, expiryValue, parseBudgets, type BudgetTexts } from './key-fields';

export type KeyRecord = ApiKeysQuery['apiKeys'][number];

const budgetTexts = (k: KeyRecord): BudgetTexts => {
  const of = (period: string) => creditsText(k.budgets.find((b) => b.period === period)?.credits);
  // The day's budget is the daily cap, which the record carries on its own too.
  return { DAY: creditsText(k.dailySpendCap) || of('DAY'), WEEK: of('WEEK'), MONTH: of('MONTH') };
};

/** Name, permissions, budgets (live keys) and expiry of one key. */
export function KeyEdit({ token, apiKey, models, onSaved }: { token: Bearer; apiKey: KeyRecord; models: ModelRecord[]; onSaved: () => void }) {
  const [name, setName] = useState(apiKey.name);
  const [allowed, setAllowed] = useState(apiKey.allowedModels ?? []);
  const [blocked, setBlocked] = useState(apiKey.blockedModels ?? []);
  const [budgets, setBudgets] = useState(budgetTexts(apiKey));
  const [expiry, setExpiry] = useState(expiryText(apiKey.expiresAt));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const { busy, once } = useOneAtATime();
  const id = apiKey.id;

  const save = (e: Event) => {
    e.preventDefault();
    return once(() => submit());
  };
  const submit = async () => {
    // Only a live key has budgets (and their fields); a test key's are never read.
    const parsed = apiKey.mode === 'LIVE' ? parseBudgets(budgets) : { budgets: [] };
    if ('error' in parsed) return setError(parsed.error);
    // Blank was saved as the old name, with "Saved." shown over the blank field.
    if (name.trim() === '') return setError('A key needs a name: type one, or put back its old one.');
    const input: UpdateApiKeyInput = {
      name: name.trim(),
      allowedModels: allowed.length ? allowed : null,
      blockedModels: blocked.length ? blocked : null,
    };
    // `budgets` replaces all three, the daily cap included ([] clears them).
    if (apiKey.mode === 'LIVE') input.budgets = parsed.budgets;
    // Sent only when changed: an expiry kept as it is must not be judged again (it may have passed).
    if (expiry !== expiryText(apiKey.expiresAt)) input.expiresAt = expiryValue(expiry);
    setError(null);
    setSaved(false);
    try {
      await execute(token, UpdateApiKeyMutation, { id, input });
      setSaved(true);
      onSaved();
    } catch (err) {
      setError(describeError(err));
    }
  };

  return (
    // "Saved." is about what was saved: it goes with the next edit.
    <form onSubmit={save} onInput={() => setSaved(false)} onChange={() => setSaved(false)} class="grid" aria-label={`Settings of ${apiKey.name}`}>
      <div class="field">
        <label for={`name-${id}`}>Name</label>
        <input id={`name-${id}`} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <ModelPicker id={`allowed-${id}`} label="Allowed models (none: all)" models={models} value={allowed} onChange={setAllowed} />
      <ModelPicker id={`blocked-${id}`} label="Blocked models" models={models} value={blocked} onChange={setBlocked} />
      {apiKey.mode === 'LIVE' && <BudgetFields id={id} value={budgets} onChange={setBudgets} />}
      <ExpiryField id={`expiry-${id}`} value={expiry} onChange={setExpiry} />
      <ErrorNote message={error} />
      {saved && <p role="status">Saved.</p>}
      <button type="submit" disabled={busy}>
        Save
      </button>
    </form>
  );
}
