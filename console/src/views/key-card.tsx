import { useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { RevokeApiKeyMutation } from '../api/operations';
import { ErrorNote, credits, when } from '../ui';
import type { ModelRecord } from './models';
import { ConfirmButton } from './confirm-button';
import { KeyEdit, type KeyRecord } from './key-edit';
import { WebhookPanel } from './webhook-panel';

/** One active key: its facts, the edit and webhook panels, revoke (in two steps). */
export function KeyCard(props: { token: Bearer; apiKey: KeyRecord; models: ModelRecord[]; onChanged: () => void; onRevoked: (keyId: string) => Promise<void> }) {
  const { token, apiKey, models } = props;
  const [open, setOpen] = useState<'edit' | 'webhook' | null>(null);
  const [error, setError] = useState<string | null>(null);
  const revoke = async () => {
    setError(null);
    try {
      await execute(token, RevokeApiKeyMutation, { id: apiKey.id });
      await props.onRevoked(apiKey.id);
    } catch (err) {
      setError(describeError(err));
    }
  };
  // The card's error is a failed revoke: cancelled, or the key changed since, it no longer applies.
  const changed = () => {
    setError(null);
    props.onChanged();
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
        <ConfirmButton label="Revoke" confirmLabel="Confirm revoke" onConfirm={revoke} onCancel={() => setError(null)} />
      </div>
      <ErrorNote message={error} />
      {open === 'edit' && <KeyEdit token={token} apiKey={apiKey} models={models} onSaved={changed} />}
      {open === 'webhook' && <WebhookPanel token={token} apiKey={apiKey} onChanged={changed} />}
    </li>
  );
}
