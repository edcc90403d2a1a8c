import { useEffect, useState } from 'preact/hooks';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import type { AdminAccountsQuery as AccountsResult } from '../gql/graphql';
import { ErrorNote, credits, when } from '../ui';
import { AdminAccountsQuery } from './admin-operations';

type Row = AccountsResult['adminAccounts']['nodes'][number];
const PAGE = 25;

/** Accounts newest first; a search matches an account id exactly or a subject in part. */
export function Accounts({ token }: { token: Bearer }) {
  const [typed, setTyped] = useState('');
  const [search, setSearch] = useState('');
  const [rows, setRows] = useState<Row[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = async (after: string | null) => {
    setBusy(true);
    try {
      const d = await execute(token, AdminAccountsQuery, { search: search || null, first: PAGE, after });
      setRows((r) => [...(after ? (r ?? []) : []), ...d.adminAccounts.nodes]);
      setNext(d.adminAccounts.pageInfo.hasNextPage ? (d.adminAccounts.pageInfo.endCursor ?? null) : null);
      setError(null);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(null), [token, search]);

  return (
    <div class="stack">
      <form
        class="card row"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setSearch(typed.trim());
        }}
      >
        <label for="account-search" class="sr-only">
          Account id or subject
        </label>
        <input id="account-search" type="search" placeholder="Account id or subject" value={typed} onInput={(e) => setTyped(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          Search
        </button>
      </form>
      <ErrorNote message={error} />
      <section class="card" aria-labelledby="accounts-heading">
        <h2 id="accounts-heading">{search ? `Accounts matching “${search}”` : 'Newest accounts'}</h2>
        {rows === null ? (
          <p>{error ? '' : 'Loading…'}</p>
        ) : rows.length === 0 ? (
          <p>No account matches.</p>
        ) : (
          <table class="stacked">
            <caption class="sr-only">Accounts</caption>
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Subject</th>
                <th scope="col" class="num">
                  Balance
                </th>
                <th scope="col">Member</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((a) => (
                <tr key={a.id}>
                  <td data-label="Account">
                    <a href={`#/accounts/${a.id}`} class="mono">
                      {a.id}
                    </a>
                  </td>
                  <td data-label="Subject">
                    <span class="mono">{a.subject}</span>
                  </td>
                  <td data-label="Balance" class="num">
                    {credits(a.balance)}
                  </td>
                  <td data-label="Member">{a.member ? 'yes' : 'no'}</td>
                  <td data-label="Created">{when(a.created)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        {next && (
          <button type="button" class="secondary" disabled={busy} onClick={() => void load(next)}>
            Load more
          </button>
        )}
      </section>
    </div>
  );
}
