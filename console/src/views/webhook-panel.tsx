import { useRef, useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { RegenerateWebhookSecretMutation, SetWebhookMutation, WebhookDeliveriesQuery } from '../api/operations';
import type { WebhookDeliveriesQuery as DeliveriesResult } from '../gql/graphql';
import { ErrorNote, SecretOnce, useOneAtATime, when } from '../ui';
import type { KeyRecord } from './key-edit';
import { ConfirmButton } from './confirm-button';

type Delivery = DeliveriesResult['webhookDeliveries'][number];

/** The key's webhook: set or clear the URL, regenerate the secret (shown once), read the delivery log. */
export function WebhookPanel({ token, apiKey, onChanged }: { token: Bearer; apiKey: KeyRecord; onChanged: () => void }) {
  const id = apiKey.id;
  const [url, setUrl] = useState(apiKey.webhook?.url ?? '');
  const [secret, setSecret] = useState<string | null>(null);
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const urlInput = useRef<HTMLInputElement>(null);
  const { busy, once } = useOneAtATime();

  const run = (work: () => Promise<void>) =>
    once(async () => {
      setError(null);
      try {
        await work();
      } catch (err) {
        setError(describeError(err));
      }
    });
  const save = (e: Event) => {
    e.preventDefault();
    return run(async () => {
      const { setWebhook } = await execute(token, SetWebhookMutation, { keyId: id, url: url.trim() || null });
      setSecret(setWebhook.secret ?? null);
      onChanged();
    });
  };
  const clear = () =>
    run(async () => {
      await execute(token, SetWebhookMutation, { keyId: id, url: null });
      setUrl('');
      setSecret(null);
      onChanged();
      // Its buttons go with the webhook: focus to the field where a new one is set.
      urlInput.current?.focus();
    });
  const regenerate = () =>
    run(async () => {
      const { regenerateWebhookSecret } = await execute(token, RegenerateWebhookSecretMutation, { keyId: id });
      setSecret(regenerateWebhookSecret.secret ?? null);
    });
  const showLog = () => run(async () => setDeliveries((await execute(token, WebhookDeliveriesQuery, { keyId: id })).webhookDeliveries));

  return (
    <div class="stack">
      <form onSubmit={save} class="grid" aria-label={`Webhook of ${apiKey.name}`}>
        <div class="field">
          <label for={`hook-${id}`}>Webhook URL (https)</label>
          <input id={`hook-${id}`} ref={urlInput} type="url" value={url} aria-describedby={`hook-note-${id}`} placeholder="https://example.com/hooks" onInput={(e) => {
              setUrl(e.currentTarget.value);
              setError(null);
            }} />
          <p class="hint" id={`hook-note-${id}`}>
            {apiKey.webhook ? 'Saving issues a new signing secret, shown once: the current one stops working.' : 'Saving issues a signing secret, shown once.'}
          </p>
        </div>
        <div class="row">
          <button type="submit" disabled={busy}>
            Save webhook
          </button>
          {apiKey.webhook && (
            <>
              <ConfirmButton secondary label="Regenerate secret" confirmLabel="Confirm regenerate (the current secret stops working)" onConfirm={regenerate} />
              <ConfirmButton secondary label="Clear webhook" confirmLabel="Confirm clear webhook" onConfirm={clear} />
            </>
          )}
        </div>
      </form>
      {secret && (
        <SecretOnce
          label={`Webhook secret of ${apiKey.name}`}
          value={secret}
          onDone={() => {
            setSecret(null);
            urlInput.current?.focus();
          }}
        />
      )}
      <ErrorNote message={error} />
      <div>
        <button type="button" class="secondary" onClick={showLog}>
          {deliveries ? 'Refresh delivery log' : 'Show delivery log'}
        </button>
        {deliveries && deliveries.length === 0 && <p>No deliveries yet.</p>}
        {deliveries && deliveries.length > 0 && (
          <ul class="log" aria-label={`Webhook deliveries of ${apiKey.name}`}>
            {deliveries.map((d) => (
              <li>
                <span class="mono">{d.eventId}</span> · attempt {d.attempt} · {d.statusCode ?? 'no answer'}
                {d.error ? ` · ${d.error}` : ''} · {d.durationMs} ms · {when(d.created)}
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}
