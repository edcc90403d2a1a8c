import { useEffect, useState } from 'preact/hooks';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import type { AdminUpstreamsQuery as UpstreamsResult } from '../gql/graphql';
import { ErrorNote, when } from '../ui';
import { AdminUpstreamsQuery } from './admin-operations';

type Route = UpstreamsResult['adminUpstreams'][number];

/** Every upstream route of the catalog and its circuit (GET /admin/upstreams), read again on Refresh. */
export function Upstreams({ token }: { token: Bearer }) {
  const [routes, setRoutes] = useState<Route[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  useEffect(() => {
    execute(token, AdminUpstreamsQuery).then(
      (d) => {
        setRoutes(d.adminUpstreams);
        setError(null);
      },
      (err) => setError(describeError(err)),
    );
  }, [token, tick]);

  return (
    <section class="card" aria-labelledby="routes-heading">
      <div class="row spread">
        <h2 id="routes-heading">Routes</h2>
        <button type="button" class="secondary" onClick={() => setTick((t) => t + 1)}>
          Refresh
        </button>
      </div>
      <ErrorNote message={error} />
      {routes === null ? (
        <p>{error ? '' : 'Loading…'}</p>
      ) : routes.length === 0 ? (
        <p>The catalog names no upstream route.</p>
      ) : (
        <table class="stacked">
          <caption class="sr-only">Upstream routes and their circuits</caption>
          <thead>
            <tr>
              <th scope="col">Route</th>
              <th scope="col">Provider</th>
              <th scope="col">Models</th>
              <th scope="col">Circuit</th>
              <th scope="col" class="num">
                Calls / failures (30 s)
              </th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {routes.map((r) => (
              <tr key={r.id} class={r.state === 'closed' ? undefined : 'failed'}>
                <td data-label="Route">
                  <span class="mono">{r.id}</span>
                </td>
                <td data-label="Provider">{r.provider}</td>
                <td data-label="Models">{r.models.join(', ')}</td>
                <td data-label="Circuit">
                  <span class={`status ${r.state === 'closed' ? 'completed' : r.state === 'open' ? 'failed' : 'processing'}`}>{r.state.replace('_', '-')}</span>
                  {r.openedAt && <span class="detail">opened {when(r.openedAt)}</span>}
                </td>
                <td data-label="Calls / failures" class="num">
                  {r.window.calls} / {r.window.failures}
                </td>
                <td data-label="Last error">{r.lastError ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
