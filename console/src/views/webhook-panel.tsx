import { useMemo } from 'preact/hooks';
import { execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { RegenerateWebhookSecretMutation, SetWebhookMutation, WebhookDeliveriesQuery } from '../api/operations';
import type { KeyRecord } from './key-edit';
import { WebhookForm, type WebhookActions } from './webhook-form';

/** A key's webhook: the shared webhook form over the key's mutations and delivery log. */
export function WebhookPanel({ token, apiKey, onChanged }: { token: Bearer; apiKey: KeyRecord; onChanged: () => void }) {
  const keyId = apiKey.id;
  const actions = useMemo<WebhookActions>(
    () => ({
      save: async (url) => (await execute(token, SetWebhookMutation, { keyId, url })).setWebhook.secret ?? null,
      regenerate: async () => (await execute(token, RegenerateWebhookSecretMutation, { keyId })).regenerateWebhookSecret.secret ?? null,
      deliveries: async () => (await execute(token, WebhookDeliveriesQuery, { keyId })).webhookDeliveries,
    }),
    [token, keyId],
  );
  return <WebhookForm id={keyId} name={apiKey.name} url={apiKey.webhook?.url ?? null} actions={actions} onChanged={onChanged} />;
}
