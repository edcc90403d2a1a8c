import { useEffect, useRef, useState } from 'preact/hooks';
import { execute, describeError } from '../api/client';
import type { Bearer } from '../api/bearer';
import { ApiKeysQuery } from '../api/operations';
import { RequestsQuery } from '../api/request-log-operations';
import { downloadExport } from '../api/request-export';
import { ErrorNote, useOneAtATime } from '../ui';
import { useErrorSlots } from '../error-slots';
import { loadModels, type ModelRecord } from './models';
import { ActivityFilterForm, NO_FILTERS, exportQuery, requestArgs, type ActivityFilters } from './activity-filters';
import { RequestTable, type RequestRow } from './request-table';

const PAGE = 25;

/** The request log: filtered by key, model, status and UTC days, paged newest first, a row's detail, and an export of what the filters match. */
export function Activity({ token }: { token: Bearer }) {
  const [filters, setFilters] = useState<ActivityFilters>(NO_FILTERS);
  const [rows, setRows] = useState<RequestRow[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [keys, setKeys] = useState<Array<{ id: string; name: string }>>([]);
  const [models, setModels] = useState<ModelRecord[]>([]);
  const [exportError, setExportError] = useState<string | null>(null);
  const errors = useErrorSlots();
  const exporting = useOneAtATime();
  const paging = useOneAtATime();
  // The filters a page was read for: an answer to filters changed since is dropped.
  const current = useRef(filters);
  current.current = filters;

  useEffect(() => {
    execute(token, ApiKeysQuery).then((d) => setKeys(d.apiKeys.map((k) => ({ id: k.id, name: k.name }))), errors.failed('keys'));
    loadModels(token).then(setModels, errors.failed('models'));
  }, [token]);

  const read = async (f: ActivityFilters, after: string | null) => {
    try {
      const { requests } = await execute(token, RequestsQuery, { ...requestArgs(f), first: PAGE, after });
      if (current.current !== f) return;
      setRows((rs) => (after ? [...(rs ?? []), ...requests.nodes] : requests.nodes));
      setNext(requests.pageInfo.hasNextPage ? (requests.pageInfo.endCursor ?? null) : null);
      errors.succeeded('requests');
    } catch (err) {
      if (current.current === f) errors.failed('requests')(err);
    }
  };
  useEffect(() => {
    setRows(null);
    setOpen(null);
    void read(filters, null);
  }, [token, filters]);

  const keyNames = new Map(keys.map((k) => [k.id, k.name]));
  const download = (format: 'csv' | 'jsonl') =>
    exporting.once(async () => {
      setExportError(null);
      try {
        await downloadExport(token, format, exportQuery(filters));
      } catch (err) {
        setExportError(describeError(err));
      }
    });

  return (
    <div class="stack">
      <section class="card" aria-labelledby="filters-heading">
        <h2 id="filters-heading">Filters</h2>
        <ActivityFilterForm value={filters} keys={keys} models={models} onChange={setFilters} />
        <div class="row">
          <button type="button" class="secondary" disabled={exporting.busy} onClick={() => download('csv')}>
            Export CSV
          </button>
          <button type="button" class="secondary" disabled={exporting.busy} onClick={() => download('jsonl')}>
            Export JSON lines
          </button>
          <span class="hint">Every call the filters match (days in UTC, both included), not only the rows shown.</span>
        </div>
        <ErrorNote message={exportError} />
      </section>
      <section class="card" aria-labelledby="requests-heading">
        <h2 id="requests-heading">Requests</h2>
        <ErrorNote message={errors.message} />
        {rows === null && !errors.failing('requests') && <p class="hint">Loading…</p>}
        {rows?.length === 0 && <p>No requests match.</p>}
        {rows && rows.length > 0 && <RequestTable rows={rows} keyNames={keyNames} open={open} onToggle={(id) => setOpen(open === id ? null : id)} />}
        {next && (
          <button type="button" class="secondary" disabled={paging.busy} onClick={() => paging.once(() => read(filters, next))}>
            Load more
          </button>
        )}
      </section>
    </div>
  );
}
