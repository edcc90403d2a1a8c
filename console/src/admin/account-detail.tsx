import { useEffect, useState } from 'preact/hooks';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import type { AdminAccountQuery as AccountResult } from '../gql/graphql';
import { ErrorNote, credits, useOneAtATime, when } from '../ui';
import { AdminAccountQuery, AdminSetMemberMutation } from './admin-operations';
import { GrantForm } from './grant-form';
import { AdminLedger } from './admin-ledger';

type Account = AccountResult['adminAccount'];

/** One account: who owns it, its balance and member flag (with the operator's changes), its keys and its statement. */
export function AccountDetail({ token, id }: { token: Bearer; id: string }) {
  const [account, setAccount] = useState<Account | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Each change of the balance reads the statement again.
  const [tick, setTick] = useState(0);
  const member = useOneAtATime();

  useEffect(() => {
    setAccount(null);
    execute(token, AdminAccountQuery, { id }).then(
      (d) => {
        setAccount(d.adminAccount);
        setError(null);
      },
      (err) => setError(describeError(err)),
    );
  }, [token, id]);

  const changed = (a: { balance: number; member: boolean }) => {
    setAccount((x) => (x ? { ...x, balance: a.balance, member: a.member } : x));
    setTick((t) => t + 1);
  };
  const toggleMember = () =>
    member.once(async () => {
      if (!account) return;
      try {
        changed((await execute(token, AdminSetMemberMutation, { accountId: account.id, member: !account.member })).adminSetMember);
        setError(null);
      } catch (err) {
        setError(describeError(err));
      }
    });

  return (
    <div class="stack">
      <p>
        <a href="#/accounts">← All accounts</a>
      </p>
      <ErrorNote message={error} />
      {account && (
        <>
          <section class="card" aria-labelledby="account-heading">
            <h2 id="account-heading" class="mono">
              {account.id}
            </h2>
            <dl class="facts">
              <dt>Subject</dt>
              <dd class="mono">{account.subject}</dd>
              <dt>Issuer</dt>
              <dd class="mono">{account.issuer}</dd>
              <dt>Created</dt>
              <dd>{when(account.created)}</dd>
              <dt>Balance</dt>
              <dd data-testid="admin-balance">{credits(account.balance)}</dd>
              <dt>Member</dt>
              <dd>{account.member ? 'yes' : 'no'}</dd>
            </dl>
            <button type="button" class="secondary" disabled={member.busy} onClick={() => void toggleMember()}>
              {account.member ? 'Remove membership' : 'Make member'}
            </button>
          </section>
          <GrantForm token={token} accountId={account.id} onDone={changed} />
          <section class="card" aria-labelledby="keys-heading">
            <h2 id="keys-heading">API keys</h2>
            {account.keys.length === 0 ? (
              <p>No active key.</p>
            ) : (
              <ul class="log">
                {account.keys.map((k) => (
                  <li key={k.id}>
                    <strong>{k.name}</strong> <span class="tag muted">{k.mode.toLowerCase()}</span> <span class="mono">{k.id}</span>
                    <span class="hint">
                      {' '}
                      · created {when(k.created)} · last used {when(k.lastUsed)}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section class="card" aria-labelledby="purchases-heading">
            <h2 id="purchases-heading">Purchases</h2>
            {account.purchases.nodes.length === 0 ? (
              <p>No purchase.</p>
            ) : (
              <table class="statement">
                <caption class="sr-only">Purchases of credits, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Purchase</th>
                    <th scope="col" class="num">
                      Credits
                    </th>
                    <th scope="col" class="num">
                      USD
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {account.purchases.nodes.map((p) => (
                    <tr key={p.id}>
                      <td>{when(p.created)}</td>
                      <td>
                        {p.status.toLowerCase().replace('_', ' ')}
                        <span class="detail mono">{p.id}</span>
                      </td>
                      <td class="num">{p.credits.toLocaleString('en-US', { maximumFractionDigits: 6 })}</td>
                      <td class="num">{p.amountUsd.toFixed(2)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {account.purchases.pageInfo.hasNextPage && <p class="hint">The 20 newest are shown.</p>}
          </section>
          <AdminLedger token={token} accountId={account.id} tick={tick} />
        </>
      )}
      {!account && !error && <p>Loading…</p>}
    </div>
  );
}
