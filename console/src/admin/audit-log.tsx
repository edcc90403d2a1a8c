import { useEffect, useState } from 'preact/hooks';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import type { AuditLogQuery as AuditResult } from '../gql/graphql';
import { ErrorNote, when } from '../ui';
import { AuditLogQuery } from './admin-operations';

type Entry = AuditResult['auditLog']['nodes'][number];
type Facts = Entry['before'];
const PAGE = 25;

/** The order facts read best in; any other follows, as stored. */
const ORDER = ['balance', 'member', 'credits', 'reason', 'pendingFromLeases', 'models', 'routes'];
const rank = (k: string) => (ORDER.includes(k) ? ORDER.indexOf(k) : ORDER.length);

/** An entry's facts as `name: value` pairs. */
const factsText = (facts: Facts): string =>
  facts
    ? Object.entries(facts)
        .sort(([a], [b]) => rank(a) - rank(b))
        .map(([k, v]) => `${k}: ${String(v)}`)
        .join(', ')
    : '—';

/** Every operator action, newest first (GET /admin/audit): who, what, on what, before and after. */
export function AuditLogView({ token }: { token: Bearer }) {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = async (after: string | null) => {
    setBusy(true);
    try {
      const { auditLog } = await execute(token, AuditLogQuery, { first: PAGE, after });
      setEntries((es) => [...(after ? (es ?? []) : []), ...auditLog.nodes]);
      setNext(auditLog.pageInfo.hasNextPage ? (auditLog.pageInfo.endCursor ?? null) : null);
      setError(null);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(null), [token]);

  return (
    <section class="card" aria-labelledby="audit-heading">
      <div class="row spread">
        <h2 id="audit-heading">Operator actions</h2>
        <button type="button" class="secondary" disabled={busy} onClick={() => void load(null)}>
          Refresh
        </button>
      </div>
      <ErrorNote message={error} />
      {entries === null ? (
        <p>{error ? '' : 'Loading…'}</p>
      ) : entries.length === 0 ? (
        <p>No operator action yet.</p>
      ) : (
        <table class="stacked audit">
          <caption class="sr-only">Audit log, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Actor</th>
              <th scope="col">Action</th>
              <th scope="col">Target</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <td data-label="When">{when(e.created)}</td>
                <td data-label="Actor">
                  <span class="mono">{e.actor}</span>
                </td>
                <td data-label="Action" class="nowrap">
                  {e.action}
                </td>
                <td data-label="Target">
                  {e.target.startsWith('acct_') ? (
                    <a href={`#/accounts/${e.target}`} class="mono">
                      {e.target}
                    </a>
                  ) : (
                    e.target
                  )}
                </td>
                <td data-label="Before">{factsText(e.before)}</td>
                <td data-label="After">{factsText(e.after)}</td>
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
  );
}
