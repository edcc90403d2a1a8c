import { useEffect, useState } from 'preact/hooks';
import { execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { AccountWebhookDeliveriesQuery } from '../api/account-operations';
import type { DeliveryFieldsFragment } from '../gql/graphql';
import { unseenAlerts } from '../alerts-seen';
import { when } from '../ui';

/**
 * Overview's word that an alert fired: the account's events delivered (or attempted) since the
 * owner last opened Settings in this browser, the newest named, with a link to Settings. Read
 * again with the view's other data (`tick`).
 */
export function AlertNotice({ token, accountId, tick }: { token: Bearer; accountId: string; tick: number }) {
  const [unseen, setUnseen] = useState<DeliveryFieldsFragment[]>([]);
  useEffect(() => {
    // Best effort: the notice is a pointer to Settings, which says what failed if this cannot be read.
    execute(token, AccountWebhookDeliveriesQuery, { first: 50 }).then(
      (d) => setUnseen(unseenAlerts(accountId, d.accountWebhookDeliveries)),
      () => undefined,
    );
  }, [token, accountId, tick]);
  const newest = unseen[0];
  if (!newest) return null;
  return (
    <p class="notice alert-notice" role="status" data-testid="alert-notice">
      {unseen.length === 1 ? 'An alert fired: ' : `${unseen.length} alerts fired, the newest: `}
      <strong class="mono">{newest.eventType}</strong> at {when(newest.created)}. <a href="#/settings">See them in Settings</a>
    </p>
  );
}
