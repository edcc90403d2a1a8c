import { useEffect, useRef, useState } from 'preact/hooks';
import { execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { ApiKeysQuery } from '../api/operations';
import { ErrorNote } from '../ui';
import { useErrorSlots } from '../error-slots';
import { loadModels, type ModelRecord } from './models';
import { KeyCreate } from './key-create';
import { KeyCard } from './key-card';
import type { KeyRecord } from './key-edit';

/** The account's active keys: create, edit, webhooks, delivery logs, revoke. */
/** `onSecret`: a key created here, whose secret Jobs queues with; `onRevoked`: a key revoked here. */
export function Keys({ token, onSecret, onRevoked }: { token: Bearer; onSecret: (secret: string, keyId: string) => void; onRevoked: (keyId: string) => void }) {
  const [keys, setKeys] = useState<KeyRecord[] | null>(null);
  const [models, setModels] = useState<ModelRecord[]>([]);
  const errors = useErrorSlots();
  const heading = useRef<HTMLHeadingElement>(null);
  const reload = () =>
    execute(token, ApiKeysQuery).then((d) => {
      setKeys(d.apiKeys);
      errors.succeeded('keys');
    }, errors.failed('keys'));
  // The revoked card (and the focused button in it) is gone: focus goes to the list's heading, which says how many keys are left.
  const afterRevoke = async (keyId: string) => {
    onRevoked(keyId);
    await reload();
    heading.current?.focus();
  };
  useEffect(() => {
    void reload();
    loadModels(token).then((ms) => {
      setModels(ms);
      errors.succeeded('models');
    }, errors.failed('models'));
  }, [token]);

  return (
    <div class="stack">
      <ErrorNote message={errors.message} />
      <KeyCreate
        token={token}
        models={models}
        keyCount={keys?.length ?? null}
        onCreated={(secret, keyId) => {
          onSecret(secret, keyId);
          void reload();
        }}
      />
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading" tabIndex={-1} ref={heading}>
          Active keys{keys ? ` (${keys.length} of 10)` : ''}
        </h2>
        {keys?.length === 0 && <p>No keys yet.</p>}
        <ul class="cards">
          {keys?.map((k) => (
            <KeyCard key={k.id} token={token} apiKey={k} models={models} onChanged={reload} onRevoked={afterRevoke} onRotated={onSecret} />
          ))}
        </ul>
      </section>
    </div>
  );
}
