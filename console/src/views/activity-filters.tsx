import type { RequestOutcome } from '../gql/graphql';
import type { ModelRecord } from './models';

/** What the Activity view shows: '' is "any" for each. Days are UTC (YYYY-MM-DD), both included. */
export interface ActivityFilters {
  keyId: string;
  model: string;
  /** 'ok', 'error', a status code, or ''. */
  status: string;
  from: string;
  to: string;
}

export const NO_FILTERS: ActivityFilters = { keyId: '', model: '', status: '', from: '', to: '' };

const CODES = [200, 400, 401, 402, 403, 404, 409, 413, 422, 429, 499, 500, 502, 503, 504];

/** The filters as the GraphQL `requests` arguments take them (absent: any). */
export function requestArgs(f: ActivityFilters) {
  const outcome: RequestOutcome | null = f.status === 'ok' ? 'OK' : f.status === 'error' ? 'ERROR' : null;
  return {
    keyId: f.keyId || null,
    model: f.model || null,
    outcome,
    status: /^\d{3}$/.test(f.status) ? Number(f.status) : null,
    from: f.from || null,
    to: f.to || null,
  };
}

/** The same filters as the export's query string. */
export function exportQuery(f: ActivityFilters): URLSearchParams {
  const q = new URLSearchParams();
  if (f.keyId) q.set('keyId', f.keyId);
  if (f.model) q.set('model', f.model);
  if (f.status === 'ok' || f.status === 'error') q.set('outcome', f.status);
  else if (f.status) q.set('status', f.status);
  if (f.from) q.set('from', f.from);
  if (f.to) q.set('to', f.to);
  return q;
}

export function ActivityFilterForm(props: {
  value: ActivityFilters;
  keys: Array<{ id: string; name: string }>;
  models: ModelRecord[];
  onChange: (f: ActivityFilters) => void;
}) {
  const f = props.value;
  const set = (patch: Partial<ActivityFilters>) => props.onChange({ ...f, ...patch });
  return (
    <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
      <div class="field">
        <label for="filter-key">Key</label>
        <select id="filter-key" value={f.keyId} onChange={(e) => set({ keyId: e.currentTarget.value })}>
          <option value="">All keys</option>
          {props.keys.map((k) => (
            <option value={k.id}>{k.name}</option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-model">Model</label>
        <select id="filter-model" value={f.model} onChange={(e) => set({ model: e.currentTarget.value })}>
          <option value="">All models</option>
          {props.models.map((m) => (
            <option value={m.id}>{m.id}</option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-status">Status</label>
        <select id="filter-status" value={f.status} onChange={(e) => set({ status: e.currentTarget.value })}>
          <option value="">Any</option>
          <option value="ok">Succeeded (below 400)</option>
          <option value="error">Failed (400 and above)</option>
          {CODES.map((c) => (
            <option value={String(c)}>{c}</option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-from">From (UTC day)</label>
        <input id="filter-from" type="date" value={f.from} max={f.to || undefined} onChange={(e) => set({ from: e.currentTarget.value })} />
      </div>
      <div class="field">
        <label for="filter-to">To (UTC day)</label>
        <input id="filter-to" type="date" value={f.to} min={f.from || undefined} onChange={(e) => set({ to: e.currentTarget.value })} />
      </div>
      <div class="field filter-reset">
        <button type="button" class="secondary" onClick={() => props.onChange(NO_FILTERS)}>
          Clear filters
        </button>
      </div>
    </form>
  );
}
