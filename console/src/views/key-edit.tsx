import { useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { UpdateApiKeyMutation } from '../api/operations';
import type { ApiKeysQuery } from '../gql/graphql';
import { ErrorNote, useOneAtATime } from '../ui';
import type { ModelRecord } from './models';
import { ModelPicker, parseCap } from './model-picker';

export type KeyRecord = ApiKeysQuery['apiKeys'][number];

/** Name, permissions and daily cap of one key. */
export function KeyEdit({ token, apiKey, models, onSaved }: { token: Bearer; apiKey: KeyRecord; models: ModelRecord[]; onSaved: () => void }) {
  const [name, setName] = useState(apiKey.name);
  const [allowed, setAllowed] = useState(apiKey.allowedModels ?? []);
  const [blocked, setBlocked] = useState(apiKey.blockedModels ?? []);
  const [cap, setCap] = useState(apiKey.dailySpendCap === null || apiKey.dailySpendCap === undefined ? '' : String(apiKey.dailySpendCap));
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  const { busy, once } = useOneAtATime();
  const id = apiKey.id;

  const save = (e: Event) => {
    e.preventDefault();
    return once(() => submit());
  };
  const submit = async () => {
    // Only a live key has a cap (and the field); a test key's is never read.
    const parsed = apiKey.mode === 'LIVE' ? parseCap(cap) : { cap: null };
    if ('error' in parsed) return setError(parsed.error);
    // Blank was saved as the old name, with "Saved." shown over the blank field.
    if (name.trim() === '') return setError('A key needs a name: type one, or put back its old one.');
    setError(null);
    setSaved(false);
    try {
      await execute(token, UpdateApiKeyMutation, {
        id,
        input: {
          name: name.trim(),
          allowedModels: allowed.length ? allowed : null,
          blockedModels: blocked.length ? blocked : null,
          ...(apiKey.mode === 'LIVE' ? { dailySpendCap: parsed.cap } : {}),
        },
      });
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
      {apiKey.mode === 'LIVE' && (
        <div class="field">
          <label for={`cap-${id}`}>Daily spend cap (credits; empty: none)</label>
          <input id={`cap-${id}`} inputMode="decimal" value={cap} onInput={(e) => setCap(e.currentTarget.value)} />
        </div>
      )}
      <ErrorNote message={error} />
      {saved && <p role="status">Saved.</p>}
      <button type="submit" disabled={busy}>
        Save
      </button>
    </form>
  );
}
