import { useRef, useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { RotateApiKeyMutation } from '../api/account-operations';
import { ErrorNote, SecretOnce, useOneAtATime, when } from '../ui';
import type { KeyRecord } from './key-edit';

/** The gateway's bounds on a rotation's grace. */
const MAX_GRACE_SECONDS = 604_800;
const UNIT_SECONDS = { seconds: 1, hours: 3_600 } as const;
type Unit = keyof typeof UNIT_SECONDS;

/** Whole seconds from the fields, or a message: 0 to 604,800 seconds (a week). */
function graceSeconds(text: string, unit: Unit): number | { error: string } {
  const t = text.trim();
  const seconds = /^\d{1,7}$/.test(t) ? Number(t) * UNIT_SECONDS[unit] : NaN;
  if (!(seconds >= 0 && seconds <= MAX_GRACE_SECONDS))
    return { error: 'The grace is a whole number of seconds or hours, from 0 up to a week (604,800 seconds or 168 hours).' };
  return seconds;
}

/**
 * A new secret for the key, shown once; the replaced one keeps working for the grace chosen
 * (24 hours unless changed; 0: it stops at once).
 */
export function KeyRotate({ token, apiKey, onRotated }: { token: Bearer; apiKey: KeyRecord; onRotated: (secret: string) => void }) {
  const id = apiKey.id;
  const [amount, setAmount] = useState('24');
  const [unit, setUnit] = useState<Unit>('hours');
  const [secret, setSecret] = useState<{ value: string; oldUntil: string | null } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const { busy, once } = useOneAtATime();
  const amountInput = useRef<HTMLInputElement>(null);

  const rotate = (e: Event) => {
    e.preventDefault();
    const grace = graceSeconds(amount, unit);
    if (typeof grace !== 'number') return setError(grace.error);
    return once(async () => {
      setError(null);
      try {
        const { rotateApiKey } = await execute(token, RotateApiKeyMutation, { id, graceSeconds: grace });
        setSecret({ value: rotateApiKey.key, oldUntil: rotateApiKey.previousSecretUntil ?? null });
        onRotated(rotateApiKey.key);
      } catch (err) {
        setError(describeError(err));
      }
    });
  };

  return (
    <div class="stack">
      <form onSubmit={rotate} class="grid" aria-label={`Rotate the secret of ${apiKey.name}`}>
        <fieldset class="field">
          <legend>Old secret keeps working for</legend>
          <div class="row grace">
            <input
              ref={amountInput}
              inputMode="numeric"
              aria-label="Grace"
              value={amount}
              onInput={(e) => {
                setAmount(e.currentTarget.value);
                setError(null);
              }}
            />
            <select aria-label="Grace unit" value={unit} onChange={(e) => setUnit(e.currentTarget.value as Unit)}>
              <option value="hours">hours</option>
              <option value="seconds">seconds</option>
            </select>
          </div>
          <p class="hint">0 stops it at once; at most a week. A secret replaced earlier and still in its grace stops now.</p>
        </fieldset>
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          Rotate secret
        </button>
      </form>
      {secret && (
        <>
          <SecretOnce
            label={`New secret of ${apiKey.name}`}
            value={secret.value}
            onDone={() => {
              setSecret(null);
              amountInput.current?.focus();
            }}
          />
          <p role="status">{secret.oldUntil ? `The old secret works until ${when(secret.oldUntil)}.` : 'The old secret has stopped working.'}</p>
        </>
      )}
    </div>
  );
}
