import { Router } from 'express';
import type { LoopStall } from '../../infra/runtime/loop-stall-watch';
import type { Metrics } from '../../infra/observability/metrics';
import type { DatabaseState } from '../../infra/db/database-state';

export interface DependencyState {
  /** `slow`: a probe got no answer in 3 s, though nothing failed (a stalled or overloaded server). */
  database: DatabaseState;
  /** `none`: no REDIS_URL (in-process rate limits and events). */
  redis: 'up' | 'down' | 'none';
}

/**
 * GET /healthz: 503 while draining (a balancer stops sending) or while the database does not
 * answer (the instance cannot do its work); 200 `degraded` while only Redis is away (requests are
 * served with per-instance rate limits) or while the database answers too slowly (not down:
 * taking every instance out for it would turn a stall into an outage); 200 `ok` otherwise. The body names each dependency.
 * GET /livez: 200 while the process turns its event loop (it asks nothing else: a restart would
 * not bring a dependency back); a wedged loop does not answer, and the probe's timeout says so,
 * and one kept from turning past LIVENESS_STALL_SECONDS in the last minute answers 503 `stalled`
 * (loop-stall-watch.ts).
 * GET /readyz: 200 `ready` while the database (answering, or only slow) and Redis, when
 * configured, are reachable and the instance is not draining; 503 otherwise, naming what is not.
 * GET /metrics: Prometheus text.
 */
export function opsRoutes(deps: {
  metrics: Metrics;
  isDraining: () => boolean;
  dependencies?: () => Promise<DependencyState>;
  loopStall?: () => LoopStall | undefined;
}): Router {
  const r = Router();
  r.get('/healthz', async (_req, res) => {
    if (deps.isDraining()) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    const state = deps.dependencies ? await deps.dependencies() : undefined;
    if (state?.database === 'down')
      res
        .status(503)
        .set('Retry-After', '5')
        .json({ status: 'unavailable', ...state });
    else res.json({ status: state?.redis === 'down' || state?.database === 'slow' ? 'degraded' : 'ok', ...state });
  });
  r.get('/livez', (_req, res) => {
    const stall = deps.loopStall?.();
    if (stall) res.status(503).json({ status: 'stalled', ...stall });
    else res.json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
    if (deps.isDraining()) {
      res.status(503).json({ status: 'draining' });
      return;
    }
    const state = deps.dependencies ? await deps.dependencies() : undefined;
    if (state?.database === 'down' || state?.redis === 'down') res.status(503).json({ status: 'unavailable', ...state });
    else res.json({ status: 'ready', ...state });
  });
  r.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', deps.metrics.registry.contentType);
    res.send(await deps.metrics.registry.metrics());
  });
  return r;
}
