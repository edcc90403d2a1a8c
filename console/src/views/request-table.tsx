import { Fragment } from 'preact';
import type { RequestsQuery } from '../gql/graphql';
import { credits, when } from '../ui';

export type RequestRow = RequestsQuery['requests']['nodes'][number];

const ok = (status: number) => status < 400;

/** Usage in words: only what the call used (tokens, images, seconds). */
function usage(u: RequestRow['usage']): string {
  const parts: string[] = [];
  if (u.promptTokens || u.completionTokens) parts.push(`${u.promptTokens} prompt + ${u.completionTokens} completion tokens`);
  if (u.images) parts.push(`${u.images} image${u.images === 1 ? '' : 's'}`);
  if (u.seconds) parts.push(`${u.seconds} s of video`);
  return parts.join(', ') || 'none';
}

/** One row's facts, all of them. */
function RequestDetail({ r, keyName }: { r: RequestRow; keyName: string }) {
  return (
    <dl class="facts" aria-label={`Request ${r.id}`}>
      <dt>Request id</dt>
      <dd class="mono">{r.id}</dd>
      <dt>When</dt>
      <dd>{when(r.created)}</dd>
      <dt>Key</dt>
      <dd>
        {keyName} <span class="mono">{r.keyId}</span>
      </dd>
      <dt>Endpoint</dt>
      <dd class="mono">{r.endpoint}</dd>
      <dt>Model</dt>
      <dd class="mono">{r.model}</dd>
      <dt>Status</dt>
      <dd>{r.status}</dd>
      <dt>Credits</dt>
      <dd>{credits(r.credits)}</dd>
      <dt>Usage</dt>
      <dd>{usage(r.usage)}</dd>
      <dt>Latency</dt>
      <dd>{r.latencyMs} ms</dd>
      <dt>Idempotency key</dt>
      <dd class="mono">{r.idempotencyKey ?? 'none'}</dd>
      <dt>Error</dt>
      <dd class="mono">{r.error ? [r.error.type, r.error.code].filter(Boolean).join(' · ') : 'none'}</dd>
      <dt>Job</dt>
      <dd class="mono">{r.jobId ? <a href="#/jobs">{r.jobId}</a> : 'none'}</dd>
    </dl>
  );
}

/**
 * The request log as a table, newest first; a row's Details button opens its facts under it.
 * Below 720 px each row is a stack of labelled cells (styles.css: .stacked).
 */
export function RequestTable(props: { rows: RequestRow[]; keyNames: Map<string, string>; open: string | null; onToggle: (id: string) => void }) {
  return (
    <table class="stacked requests">
      <caption class="hint">The account's calls that named a model, newest first. Times are UTC.</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Key</th>
          <th scope="col">Model</th>
          <th scope="col">Endpoint</th>
          <th scope="col">Status</th>
          <th scope="col" class="num">
            Credits
          </th>
          <th scope="col" class="num">
            Latency
          </th>
          <th scope="col">
            <span class="sr-only">Details</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r) => {
          const keyName = props.keyNames.get(r.keyId) ?? r.keyId;
          const opened = props.open === r.id;
          return (
            <Fragment key={r.id}>
              <tr data-request-id={r.id} class={ok(r.status) ? '' : 'failed'}>
                <td data-label="When">{when(r.created)}</td>
                <td data-label="Key">{keyName}</td>
                <td data-label="Model">
                  <span class="mono">{r.model}</span>
                </td>
                <td data-label="Endpoint">
                  <span class="mono">{r.endpoint}</span>
                </td>
                <td data-label="Status">
                  <div>
                    <span class={`status ${ok(r.status) ? 'completed' : 'failed'}`}>{r.status}</span>
                    {r.error && <span class="detail">{r.error.code ?? r.error.type}</span>}
                  </div>
                </td>
                <td data-label="Credits" class="num">
                  {r.credits.toLocaleString('en-US', { maximumFractionDigits: 6 })}
                </td>
                <td data-label="Latency" class="num">
                  {r.latencyMs} ms
                </td>
                <td>
                  <button type="button" class="secondary" aria-expanded={opened} aria-label={`Details of ${r.id}`} onClick={() => props.onToggle(r.id)}>
                    {opened ? 'Hide' : 'Details'}
                  </button>
                </td>
              </tr>
              {opened && (
                <tr class="detail-row">
                  <td colSpan={8}>
                    <RequestDetail r={r} keyName={keyName} />
                  </td>
                </tr>
              )}
            </Fragment>
          );
        })}
      </tbody>
    </table>
  );
}
