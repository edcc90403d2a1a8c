import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError } from '../api/client';
import type { DeliveryFieldsFragment } from '../gql/graphql';
import { ErrorNote, SecretOnce, useOneAtATime, when } from '../ui';
import { ConfirmButton } from './confirm-button';

export type Delivery = DeliveryFieldsFragment;

/** What a webhook form does, for a key's webhook or the account's alike. */
export interface WebhookActions {
  /** Sets the URL (null removes the webhook); answers the new secret, if one was issued. */
  save(url: string | null): Promise<string | null>;
  /** A new secret for the same URL. */
  regenerate(): Promise<string | null>;
  /** The delivery attempts, newest first. */
  deliveries(): Promise<Delivery[]>;
}

/**
 * One webhook: set or clear its URL, regenerate its secret (shown once), read its delivery log.
 * `name` names it in labels ("Webhook secret of <name>"); `id` keeps its element ids apart;
 * `showLog` opens the log at once (and `refresh` reads it again when it changes).
 */
export function WebhookForm(props: {
  id: string;
  name: string;
  url: string | null;
  actions: WebhookActions;
  onChanged: () => void;
  showLog?: boolean;
  refresh?: number;
}) {
  const { id, name, actions } = props;
  const [url, setUrl] = useState(props.url ?? '');
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
      setSecret(await actions.save(url.trim() || null));
      props.onChanged();
    });
  };
  const clear = () =>
    run(async () => {
      await actions.save(null);
      setUrl('');
      setSecret(null);
      props.onChanged();
      // Its buttons go with the webhook: focus to the field where a new one is set.
      urlInput.current?.focus();
    });
  const regenerate = () => run(async () => setSecret(await actions.regenerate()));
  const showLog = () => run(async () => setDeliveries(await actions.deliveries()));
  useEffect(() => {
    if (props.showLog) void showLog();
  }, [props.showLog, props.refresh]);

  return (
    <div class="stack">
      <form onSubmit={save} class="grid" aria-label={`Webhook of ${name}`}>
        <div class="field">
          <label for={`hook-${id}`}>Webhook URL (https)</label>
          <input
            id={`hook-${id}`}
            ref={urlInput}
            type="url"
            value={url}
            aria-describedby={`hook-note-${id}`}
            placeholder="https://example.com/hooks"
            onInput={(e) => {
              setUrl(e.currentTarget.value);
              setError(null);
            }}
          />
          <p class="hint" id={`hook-note-${id}`}>
            {props.url ? 'Saving issues a new signing secret, shown once: the current one stops working.' : 'Saving issues a signing secret, shown once.'}
          </p>
        </div>
        <div class="row">
          <button type="submit" disabled={busy}>
            Save webhook
          </button>
          {props.url && (
            <>
              <ConfirmButton secondary label="Regenerate secret" confirmLabel="Confirm regenerate (the current secret stops working)" onConfirm={regenerate} />
              <ConfirmButton secondary label="Clear webhook" confirmLabel="Confirm clear webhook" onConfirm={clear} />
            </>
          )}
        </div>
      </form>
      {secret && (
        <SecretOnce
          label={`Webhook secret of ${name}`}
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
          <ul class="log" aria-label={`Webhook deliveries of ${name}`}>
            {deliveries.map((d) => (
              <li key={`${d.deliveryId}-${d.attempt}`}>
                <span class="mono">{d.eventId}</span> · <strong>{d.eventType}</strong> · attempt {d.attempt} · {d.statusCode ?? 'no answer'}
                {d.error ? ` · ${d.error}` : ''} · {d.durationMs} ms · {when(d.created)}
              </li>
            ))}
          </ul>
        )}
      </div>
    </div>
  );
}
