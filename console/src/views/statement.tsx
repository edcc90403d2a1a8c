import { useEffect, useRef, useState } from 'preact/hooks';
import { execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import { LedgerQuery } from '../api/operations';
import type { LedgerQuery as LedgerResult } from '../gql/graphql';
import { when } from '../ui';
import type { useErrorSlots } from '../error-slots';

type Entry = LedgerResult['ledgerEntries']['nodes'][number];
type ErrorSlots = ReturnType<typeof useErrorSlots>;

const PAGE = 20;

/** Where the next page starts, or null on the last one. */
const nextCursor = (d: LedgerResult) => (d.ledgerEntries.pageInfo.hasNextPage ? (d.ledgerEntries.pageInfo.endCursor ?? null) : null);

/** What an entry was, in words: its kind and what the gateway recorded with it. */
function describe(e: Entry, keyNames: Map<string, string>): { what: string; detail: string | null } {
  const key = e.keyId ? (keyNames.get(e.keyId) ?? e.keyId) : null;
  const parts = (...xs: Array<string | null | undefined>) => xs.filter(Boolean).join(' · ') || null;
  switch (e.kind) {
    case 'GRANT':
      return { what: e.credits < 0 ? 'Removed by the operator' : 'Granted', detail: parts(e.reason) };
    case 'CHARGE':
      return { what: 'Charge', detail: parts(e.model, key, e.reference) };
    case 'REFUND':
      return { what: 'Refund', detail: parts(e.reason, e.model, e.reference) };
    default:
      return { what: e.kind.toLowerCase().replace('_', ' '), detail: parts(e.model, key, e.reference) };
  }
}

const signed = (n: number) => `${n > 0 ? '+' : n < 0 ? '−' : ''}${Math.abs(n).toLocaleString('en-US', { maximumFractionDigits: 6 })}`;

/**
 * The account's statement: every change of the balance, newest first (grants and removals,
 * each call's charge, refunds), a page at a time. `tick` reloads the first page and puts what is
 * new on top of what is shown (older pages opened stay). Its errors go to the view's
 * slots (`errors`), so the page says "could not be reached" once, not once per section.
 */
export function Statement({ token, tick, keyNames, errors }: { token: Bearer; tick: number; keyNames: Map<string, string>; errors: ErrorSlots }) {
  const [entries, setEntries] = useState<Entry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // What is shown, for the reload to merge into (the ledger is append-only: a loaded entry never changes).
  const shown = useRef<Entry[] | null>(null);
  shown.current = entries;

  useEffect(() => {
    execute(token, LedgerQuery, { first: PAGE }).then(
      (d) => {
        const fresh = d.ledgerEntries.nodes;
        const loaded = shown.current;
        // Older pages opened stay: the new entries go on top of them. (They stayed as they were,
        // without the new ones, so the statement stopped adding up to the balance shown beside it.)
        const at = loaded && loaded.length > PAGE ? fresh.findIndex((e) => e.id === loaded[0]?.id) : -1;
        if (loaded && at >= 0) setEntries([...fresh.slice(0, at), ...loaded]);
        else {
          setEntries(fresh);
          setNext(nextCursor(d));
        }
        errors.succeeded('statement');
      },
      errors.failed('statement'),
    );
  }, [token, tick]);

  const older = async () => {
    if (!next || busy) return;
    setBusy(true);
    try {
      const d = await execute(token, LedgerQuery, { first: PAGE, after: next });
      setEntries((es) => [...(es ?? []), ...d.ledgerEntries.nodes]);
      setNext(nextCursor(d));
      errors.succeeded('statement');
    } catch (err) {
      errors.failed('statement')(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="card" aria-labelledby="statement-heading">
      <h2 id="statement-heading">Statement</h2>
      {entries === null && !errors.failing('statement') && <p class="hint">Loading…</p>}
      {entries?.length === 0 && <p>No entries yet: grants, charges and refunds show here.</p>}
      {entries && entries.length > 0 && (
        <table class="statement">
          <caption class="hint">Every change of the balance, newest first (credits).</caption>
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
            {entries.map((e) => {
              const { what, detail } = describe(e, keyNames);
              return (
                <tr key={e.id}>
                  <td>{when(e.created)}</td>
                  <td>
                    {what}
                    {detail && <span class="detail">{detail}</span>}
                  </td>
                  <td class="num">{signed(e.credits)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {next && (
        <button type="button" class="secondary" onClick={older} disabled={busy}>
          Show older entries
        </button>
      )}
    </section>
  );
}
