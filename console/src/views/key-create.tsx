import { useEffect, useRef, useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { CreateApiKeyMutation } from '../api/operations';
import type { ApiKeyMode } from '../gql/graphql';
import { ErrorNote, SecretOnce, useOneAtATime } from '../ui';
import type { ModelRecord } from './models';
import { ModelPicker } from './model-picker';
import { parseCredits } from '../credit-input';
import { ExpiryField, expiryValue } from './key-fields';

/** Create a live or test key; its secret is shown once, with a copy button. */
export function KeyCreate({
  token,
  models,
  keyCount,
  onCreated,
}: {
  token: Bearer;
  models: ModelRecord[];
  keyCount: number | null;
  onCreated: (secret: string, keyId: string) => void;
}) {
  const [name, setName] = useState('');
  const [mode, setMode] = useState<ApiKeyMode>('LIVE');
  const [allowed, setAllowed] = useState<string[]>([]);
  const [blocked, setBlocked] = useState<string[]>([]);
  const [cap, setCap] = useState('');
  const [expiry, setExpiry] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { busy, once } = useOneAtATime();
  const nameInput = useRef<HTMLInputElement>(null);
  // A refusal such as "at most 10 active API keys" is stale once the list has changed (a key revoked).
  useEffect(() => setError(null), [keyCount]);

  const submit = (e: Event) => {
    e.preventDefault();
    // A test key has no cap: the field is disabled then, and what it still holds is not read.
    const parsed = mode === 'LIVE' ? parseCredits(cap, 'The daily cap') : { credits: null };
    if ('error' in parsed) return setError(parsed.error);
    return once(async () => {
      setError(null);
      try {
        const { createApiKey } = await execute(token, CreateApiKeyMutation, {
          input: {
            name: name.trim() || null,
            mode,
            allowedModels: allowed.length ? allowed : null,
            blockedModels: blocked.length ? blocked : null,
            dailySpendCap: parsed.credits,
            expiresAt: expiryValue(expiry),
          },
        });
        setSecret(createApiKey.key);
        setName('');
        setAllowed([]);
        setBlocked([]);
        setCap('');
        setExpiry('');
        onCreated(createApiKey.key, createApiKey.id);
      } catch (err) {
        setError(describeError(err));
      }
    });
  };

  // The secret box is gone: on to the form's first field, for another key.
  const done = () => {
    setSecret(null);
    nameInput.current?.focus();
  };

  return (
    <section class="card" aria-labelledby="create-heading">
      <h2 id="create-heading">New key</h2>
      {secret && <SecretOnce label="New key secret" value={secret} onDone={done} />}
      <form onSubmit={submit} class="grid">
        <div class="field">
          <label for="key-name">Name</label>
          <input id="key-name" ref={nameInput} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <fieldset class="field">
          <legend>Mode</legend>
          <label class="inline">
            <input type="radio" name="mode" value="LIVE" checked={mode === 'LIVE'} onChange={() => setMode('LIVE')} /> Live
          </label>
          <label class="inline">
            <input type="radio" name="mode" value="TEST" checked={mode === 'TEST'} onChange={() => setMode('TEST')} /> Test (simulator, free)
          </label>
        </fieldset>
        <ModelPicker id="create-allowed" label="Allowed models (none: all)" models={models} value={allowed} onChange={setAllowed} />
        <ModelPicker id="create-blocked" label="Blocked models" models={models} value={blocked} onChange={setBlocked} />
        <div class="field">
          <label for="create-cap">Daily spend cap (credits, live keys)</label>
          <input id="create-cap" inputMode="decimal" value={cap} disabled={mode === 'TEST'} onInput={(e) => setCap(e.currentTarget.value)} />
        </div>
        <ExpiryField id="create-expiry" value={expiry} onChange={setExpiry} />
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
    </section>
  );
}
