import { Router } from 'express';
import type { Metrics } from '../../infra/observability/metrics';

/** GET /healthz (200 once requests are taken, 503 while draining) and GET /metrics. */
export function opsRoutes(deps: { metrics: Metrics; isDraining: () => boolean }): Router {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    if (deps.isDraining()) res.status(503).json({ status: 'draining' });
    else res.json({ status: 'ok' });
  });
  r.get('/metrics', async (_req, res) => {
    res.setHeader('Content-Type', deps.metrics.registry.contentType);
    res.send(await deps.metrics.registry.metrics());
  });
  return r;
}
