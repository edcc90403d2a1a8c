import { useEffect, useState } from 'preact/hooks';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import type { AdminLedgerQuery as LedgerResult } from '../gql/graphql';
import { ErrorNote, when } from '../ui';
import { AdminLedgerQuery } from './admin-operations';

type Entry = NonNullable<LedgerResult['adminAccount']>['ledger']['nodes'][number];
const PAGE = 20;

const signed = (n: number) => `${n > 0 ? '+' : n < 0 ? '−' : ''}${Math.abs(n).toLocaleString('en-US', { maximumFractionDigits: 6 })}`;

/** The account's statement as its owner reads it, newest first, 20 entries a page; `tick` reads it again from the top. */
export function AdminLedger({ token, accountId, tick }: { token: Bearer; accountId: string; tick: number }) {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = async (after: string | null) => {
    setBusy(true);
    try {
      const { ledger } = (await execute(token, AdminLedgerQuery, { id: accountId, first: PAGE, after })).adminAccount;
      setEntries((es) => [...(after ? (es ?? []) : []), ...ledger.nodes]);
      setNext(ledger.pageInfo.hasNextPage ? (ledger.pageInfo.endCursor ?? null) : null);
      setError(null);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(null), [token, accountId, tick]);

  return (
    <section class="card" aria-labelledby="ledger-heading">
      <h2 id="ledger-heading">Statement</h2>
      <ErrorNote message={error} />
      {entries === null ? (
        <p>{error ? '' : 'Loading…'}</p>
      ) : entries.length === 0 ? (
        <p>No entry yet.</p>
      ) : (
        <table class="statement">
          <caption class="sr-only">Ledger entries, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">What</th>
              <th scope="col" class="num">
                Credits
              </th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <td>{when(e.created)}</td>
                <td>
                  {e.kind.toLowerCase().replace('_', ' ')}
                  <span class="detail">{[e.reason, e.model, e.reference].filter(Boolean).join(' · ')}</span>
                </td>
                <td class="num">{signed(e.credits)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" class="secondary" disabled={busy} onClick={() => void load(next)}>
          Show older entries
        </button>
      )}
    </section>
  );
}
