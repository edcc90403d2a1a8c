import type { ServerResponse } from 'node:http';
import type { Metrics } from '../infra/observability/metrics';

/** Counts a request and its duration when its response finishes, under the label `labelOf` gives then (a route template, never a raw path). */
export function observeRequest(metrics: Metrics, res: ServerResponse, labelOf: (status: number) => string): void {
  const started = process.hrtime.bigint();
  res.once('finish', () => {
    const route = labelOf(res.statusCode);
    metrics.httpRequests.inc({ route, status: String(res.statusCode) });
    metrics.httpDuration.observe({ route }, Number(process.hrtime.bigint() - started) / 1e9);
  });
}
