import { useEffect, useMemo, useState } from 'preact/hooks';
import { execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { AccountQuery } from '../api/operations';
import { AccountWebhookDeliveriesQuery, RegenerateAccountWebhookSecretMutation, SetAccountWebhookMutation } from '../api/account-operations';
import type { AccountQuery as AccountResult } from '../gql/graphql';
import { markAlertsSeen } from '../alerts-seen';
import { ErrorNote, credits } from '../ui';
import { useErrorSlots } from '../error-slots';
import { LowBalanceForm } from './low-balance-form';
import { WebhookForm, type WebhookActions } from './webhook-form';

/** The account's alerts: the low-balance threshold, the account webhook and its deliveries. */
export function Settings({ token }: { token: Bearer }) {
  const [account, setAccount] = useState<AccountResult['account'] | null>(null);
  const [tick, setTick] = useState(0);
  const errors = useErrorSlots();
  useEffect(() => {
    execute(token, AccountQuery).then((d) => {
      setAccount(d.account);
      errors.succeeded('account');
    }, errors.failed('account'));
  }, [token, tick]);

  const accountId = account?.id ?? null;
  const actions = useMemo<WebhookActions>(
    () => ({
      save: async (url) => (await execute(token, SetAccountWebhookMutation, { url })).setAccountWebhook.secret ?? null,
      regenerate: async () => (await execute(token, RegenerateAccountWebhookSecretMutation)).regenerateAccountWebhookSecret.secret ?? null,
      deliveries: async () => {
        const list = (await execute(token, AccountWebhookDeliveriesQuery, { first: 50 })).accountWebhookDeliveries;
        // Shown here: Overview stops naming them.
        if (accountId) markAlertsSeen(accountId, list[0]?.created);
        return list;
      },
    }),
    [token, accountId],
  );

  return (
    <div class="stack">
      <ErrorNote message={errors.message} />
      {!account && !errors.failing('account') && <p class="hint">Loading…</p>}
      {account && (
        <>
          <section class="card" aria-labelledby="low-balance-heading">
            <h2 id="low-balance-heading">Low-balance alert</h2>
            <p>
              Balance now: <strong>{credits(account.balance)}</strong>. Alert:{' '}
              {account.lowBalanceAlert === null || account.lowBalanceAlert === undefined ? 'none' : `below ${credits(account.lowBalanceAlert)}`}.
            </p>
            <LowBalanceForm token={token} threshold={account.lowBalanceAlert ?? null} onSaved={() => setTick((t) => t + 1)} />
          </section>
          <section class="card" aria-labelledby="account-webhook-heading">
            <h2 id="account-webhook-heading">Account webhook</h2>
            <p class="hint">
              Where the account's events go: <span class="mono">balance.low</span>, <span class="mono">key.budget_threshold</span>,{' '}
              <span class="mono">key.expiring</span> and <span class="mono">purchase.completed</span>, signed as key webhooks are. Now:{' '}
              <span class="mono">{account.webhook?.url ?? 'none'}</span>
            </p>
            <WebhookForm id="account" name="the account" url={account.webhook?.url ?? null} actions={actions} onChanged={() => setTick((t) => t + 1)} showLog />
          </section>
        </>
      )}
    </div>
  );
}
