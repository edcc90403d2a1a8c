import { useState } from 'preact/hooks';
import { describeError, execute } from '../api/client';
import type { Bearer } from '../api/bearer';
import type { AdminDeliveriesQuery as DeliveriesResult } from '../gql/graphql';
import { ErrorNote, when } from '../ui';
import { AdminDeliveriesQuery } from './admin-operations';

type Delivery = DeliveriesResult['adminWebhookDeliveries'][number];

/** The webhook delivery log of a key, a job or both (GET /admin/webhook-deliveries), newest first. */
export function Deliveries({ token }: { token: Bearer }) {
  const [keyId, setKeyId] = useState('');
  const [jobId, setJobId] = useState('');
  const [rows, setRows] = useState<Delivery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const find = async (e: Event) => {
    e.preventDefault();
    if (!keyId.trim() && !jobId.trim()) {
      setError('Name a key id, a job id, or both.');
      return;
    }
    setBusy(true);
    try {
      const d = await execute(token, AdminDeliveriesQuery, { keyId: keyId.trim() || null, jobId: jobId.trim() || null });
      setRows(d.adminWebhookDeliveries);
      setError(null);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="stack">
      <form class="card filters" onSubmit={find}>
        <div class="field">
          <label for="deliveries-key">Key id</label>
          <input id="deliveries-key" class="mono" autoComplete="off" value={keyId} onInput={(e) => setKeyId(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="deliveries-job">Job id</label>
          <input id="deliveries-job" class="mono" autoComplete="off" value={jobId} onInput={(e) => setJobId(e.currentTarget.value)} />
        </div>
        <div class="field filter-reset">
          <button type="submit" disabled={busy}>
            Find deliveries
          </button>
        </div>
      </form>
      <ErrorNote message={error} />
      {rows && (
        <section class="card" aria-labelledby="deliveries-heading">
          <h2 id="deliveries-heading">Delivery attempts</h2>
          {rows.length === 0 ? (
            <p>No delivery attempt matches.</p>
          ) : (
            <table class="stacked">
              <caption class="sr-only">Delivery attempts, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col" class="num">
                    Attempt
                  </th>
                  <th scope="col">Outcome</th>
                  <th scope="col" class="num">
                    Duration
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((d) => (
                  <tr key={`${d.deliveryId}-${d.attempt}`} class={d.statusCode !== null && d.statusCode < 300 ? undefined : 'failed'}>
                    <td data-label="When">{when(d.created)}</td>
                    <td data-label="Event">
                      {d.eventType}
                      <span class="detail mono">{d.eventId}</span>
                    </td>
                    <td data-label="Attempt" class="num">
                      {d.attempt}
                    </td>
                    <td data-label="Outcome">{d.statusCode !== null ? `HTTP ${d.statusCode}` : (d.error ?? 'no answer')}</td>
                    <td data-label="Duration" class="num">
                      {d.durationMs} ms
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      )}
    </div>
  );
}
