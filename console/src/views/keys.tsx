import { useEffect, useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { ApiKeysQuery, RevokeApiKeyMutation } from '../api/operations';
import { ErrorNote, credits, when } from '../ui';
import { useErrorSlots } from '../error-slots';
import { loadModels, type ModelRecord } from './models';
import { KeyCreate } from './key-create';
import { KeyEdit, type KeyRecord } from './key-edit';
import { WebhookPanel } from './webhook-panel';

function KeyCard({ token, apiKey, models, onChanged }: { token: Bearer; apiKey: KeyRecord; models: ModelRecord[]; onChanged: () => void }) {
  const [open, setOpen] = useState<'edit' | 'webhook' | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const revoke = async () => {
    setError(null);
    try {
      await execute(token, RevokeApiKeyMutation, { id: apiKey.id });
      onChanged();
    } catch (err) {
      setError(describeError(err));
    }
  };
  // The card's error is a failed revoke: cancelled, or the key changed since, it no longer applies.
  const changed = () => {
    setError(null);
    onChanged();
  };
  const cancel = () => {
    setError(null);
    setConfirming(false);
  };
  const toggle = (panel: 'edit' | 'webhook') => setOpen(open === panel ? null : panel);
  return (
    <li class="card" aria-label={`Key ${apiKey.name}`}>
      <div class="row spread">
        <h2>{apiKey.name}</h2>
        <span class={`tag ${apiKey.mode === 'TEST' ? 'muted' : ''}`}>{apiKey.mode === 'TEST' ? 'test' : 'live'}</span>
      </div>
      <dl class="facts">
        <dt>Id</dt>
        <dd class="mono">{apiKey.id}</dd>
        <dt>Allowed</dt>
        <dd>{apiKey.allowedModels?.length ? apiKey.allowedModels.join(', ') : 'all models'}</dd>
        <dt>Blocked</dt>
        <dd>{apiKey.blockedModels?.length ? apiKey.blockedModels.join(', ') : 'none'}</dd>
        <dt>Daily cap</dt>
        <dd>{apiKey.dailySpendCap === null || apiKey.dailySpendCap === undefined ? 'none' : credits(apiKey.dailySpendCap)}</dd>
        <dt>Webhook</dt>
        <dd class="mono">{apiKey.webhook?.url ?? 'none'}</dd>
        <dt>Created</dt>
        <dd>{when(apiKey.created)}</dd>
        <dt>Last used</dt>
        <dd>{when(apiKey.lastUsed)}</dd>
      </dl>
      <div class="row">
        <button type="button" class="secondary" aria-expanded={open === 'edit'} onClick={() => toggle('edit')}>
          Edit
        </button>
        <button type="button" class="secondary" aria-expanded={open === 'webhook'} onClick={() => toggle('webhook')}>
          Webhook
        </button>
        {!confirming ? (
          <button type="button" class="danger" onClick={() => setConfirming(true)}>
            Revoke
          </button>
        ) : (
          <>
            <button type="button" class="danger" onClick={revoke}>
              Confirm revoke
            </button>
            <button type="button" class="secondary" onClick={cancel}>
              Cancel
            </button>
          </>
        )}
      </div>
      <ErrorNote message={error} />
      {open === 'edit' && <KeyEdit token={token} apiKey={apiKey} models={models} onSaved={changed} />}
      {open === 'webhook' && <WebhookPanel token={token} apiKey={apiKey} onChanged={changed} />}
    </li>
  );
}

/** The account's active keys: create, edit, webhooks, delivery logs, revoke. */
export function Keys({ token, onSecret }: { token: Bearer; onSecret: (secret: string) => void }) {
  const [keys, setKeys] = useState<KeyRecord[] | null>(null);
  const [models, setModels] = useState<ModelRecord[]>([]);
  const errors = useErrorSlots();
  const reload = () =>
    execute(token, ApiKeysQuery).then((d) => {
      setKeys(d.apiKeys);
      errors.succeeded('keys');
    }, errors.failed('keys'));
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
        onCreated={(secret) => {
          onSecret(secret);
          void reload();
        }}
      />
      <section aria-labelledby="keys-heading">
        <h2 id="keys-heading">Active keys{keys ? ` (${keys.length} of 10)` : ''}</h2>
        {keys?.length === 0 && <p>No keys yet.</p>}
        <ul class="cards">
          {keys?.map((k) => <KeyCard key={k.id} token={token} apiKey={k} models={models} onChanged={reload} />)}
        </ul>
      </section>
    </div>
  );
}
