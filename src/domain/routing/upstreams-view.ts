/**
 * `GET /admin/upstreams`: every upstream route of the catalog (one entry per route id, whichever
 * models share it) with its circuit's state, window and last error. For the operator only: no
 * customer answer names a route or an upstream.
 */
import { createHash } from 'node:crypto';
import type { CatalogData } from '../catalog/model';
import type { CircuitBreakers, CircuitState } from './circuit-breaker';

export interface UpstreamView {
  id: string;
  provider: string;
  models: string[];
  state: CircuitState;
  window: { calls: number; failures: number };
  lastError: string | null;
  openedAt: string | null;
}

export function upstreamsView(catalog: CatalogData, breakers: CircuitBreakers): { object: 'list'; data: UpstreamView[] } {
  const byId = new Map<string, { provider: string; models: string[] }>();
  for (const m of catalog.models) {
    for (const r of m.routes) {
      const entry = byId.get(r.id) ?? { provider: r.provider, models: [] };
      if (!entry.models.includes(m.id)) entry.models.push(m.id);
      byId.set(r.id, entry);
    }
  }
  const data = [...byId].map(([id, { provider, models }]) => {
    const h = breakers.health(id);
    return { id, provider, models, state: h.state, window: h.window, lastError: h.lastError, openedAt: h.openedAt?.toISOString() ?? null };
  });
  return { object: 'list', data };
}

/** A short digest of the upstream a route id names in this catalog (provider, base URL, key name), or '-' when it names none. */
export function upstreamDigest(catalog: CatalogData, routeId: string): string {
  for (const m of catalog.models) {
    const r = m.routes.find((x) => x.id === routeId);
    if (r)
      return createHash('sha256')
        .update(`${r.provider}|${r.baseUrl ?? ''}|${r.apiKeyEnv ?? ''}`)
        .digest('base64url')
        .slice(0, 16);
  }
  return '-';
}
