import { useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { RevokeApiKeyMutation } from '../api/operations';
import { ErrorNote, credits, fromNow, when } from '../ui';
import type { ModelRecord } from './models';
import { ConfirmButton } from './confirm-button';
import { KeyEdit, type KeyRecord } from './key-edit';
import { WebhookPanel } from './webhook-panel';
import { KeyRotate } from './key-rotate';
import { KeyBudgets } from './key-budgets';

type Panel = 'edit' | 'webhook' | 'rotate';

/** The key's expiry in words: never, when and how soon, or that it has passed. */
function expiry(iso: string | null | undefined): string {
  if (!iso) return 'never';
  const left = fromNow(iso);
  return left ? `${when(iso)} (expires ${left})` : `expired ${when(iso)}`;
}

/** What the secret replaced by the last rotation still does. */
function oldSecret(k: KeyRecord): string {
  if (!k.previousSecretUntil) return 'stopped at the rotation';
  return fromNow(k.previousSecretUntil) ? `works until ${when(k.previousSecretUntil)}` : `stopped ${when(k.previousSecretUntil)}`;
}

/** One active key: its facts, the edit and webhook panels, revoke (in two steps). */
export function KeyCard(props: {
  token: Bearer;
  apiKey: KeyRecord;
  models: ModelRecord[];
  onChanged: () => void;
  onRevoked: (keyId: string) => Promise<void>;
  onRotated: (secret: string, keyId: string) => void;
}) {
  const { token, apiKey, models } = props;
  const [open, setOpen] = useState<Panel | null>(null);
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
  const toggle = (panel: Panel) => setOpen(open === panel ? null : panel);
  return (
    <li class="card" aria-label={`Key ${apiKey.name}`} data-key-id={apiKey.id}>
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
        <dt>Expires</dt>
        <dd class={apiKey.expiresAt && !fromNow(apiKey.expiresAt) ? 'error' : undefined}>{expiry(apiKey.expiresAt)}</dd>
        <dt>Webhook</dt>
        <dd class="mono">{apiKey.webhook?.url ?? 'none'}</dd>
        <dt>Created</dt>
        <dd>{when(apiKey.created)}</dd>
        <dt>Last used</dt>
        <dd>{when(apiKey.lastUsed)}</dd>
        {apiKey.rotatedAt && (
          <>
            <dt>Rotated</dt>
            <dd>{when(apiKey.rotatedAt)}</dd>
            <dt>Old secret</dt>
            <dd>{oldSecret(apiKey)}</dd>
          </>
        )}
      </dl>
      <KeyBudgets apiKey={apiKey} />
      <div class="row">
        <button type="button" class="secondary" aria-expanded={open === 'edit'} onClick={() => toggle('edit')}>
          Edit
        </button>
        <button type="button" class="secondary" aria-expanded={open === 'webhook'} onClick={() => toggle('webhook')}>
          Webhook
        </button>
        <button type="button" class="secondary" aria-expanded={open === 'rotate'} onClick={() => toggle('rotate')}>
          Rotate
        </button>
        <ConfirmButton label="Revoke" confirmLabel="Confirm revoke" onConfirm={revoke} onCancel={() => setError(null)} />
      </div>
      <ErrorNote message={error} />
      {open === 'edit' && <KeyEdit token={token} apiKey={apiKey} models={models} onSaved={changed} />}
      {open === 'webhook' && <WebhookPanel token={token} apiKey={apiKey} onChanged={changed} />}
      {open === 'rotate' && (
        <KeyRotate
          token={token}
          apiKey={apiKey}
          onRotated={(secret) => {
            props.onRotated(secret, apiKey.id);
            changed();
          }}
        />
      )}
    </li>
  );
}
