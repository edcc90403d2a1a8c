import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Prometheus metrics, one registry per gateway instance (tests run several in one process). */
export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests = new Counter({
    name: 'svc_http_requests_total',
    help: 'HTTP requests by route group and status',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  readonly httpDuration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'HTTP request duration by route group',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [this.registry],
  });
  readonly creditsCharged = new Counter({
    name: 'svc_credits_charged_total',
    help: 'Credits charged, by model group',
    labelNames: ['group'] as const,
    registers: [this.registry],
  });
  readonly videoJobs = new Counter({
    name: 'svc_video_jobs_total',
    help: 'Video jobs by terminal status',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });
  readonly webhookAttempts = new Counter({
    name: 'svc_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly degraded = new Counter({
    name: 'svc_degraded_operations_total',
    help: 'Operations served in a degraded way because a dependency was unreachable (e.g. per-instance rate limits while Redis is down)',
    labelNames: ['dependency', 'operation'] as const,
    registers: [this.registry],
  });
  readonly wsReadPauses = new Counter({
    name: 'svc_ws_read_pauses_total',
    help: 'Times a burst of WebSocket messages stopped every socket reading, to read them again a slice per turn',
    registers: [this.registry],
  });
  readonly upstreamCalls = new Counter({
    name: 'svc_upstream_calls_total',
    help: 'Upstream calls (each attempt) by route, model and outcome (ok, failed: the upstream failed, rejected: it refused the request)',
    labelNames: ['route', 'model', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly upstreamCallSeconds = new Histogram({
    name: 'svc_upstream_call_seconds',
    help: 'Upstream call duration by route',
    labelNames: ['route'] as const,
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly upstreamCircuitState = new Gauge({
    name: 'svc_upstream_circuit_state',
    help: "A route's circuit: 0 closed, 1 half-open, 2 open",
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  readonly dependencyUp = new Gauge({
    name: 'svc_dependency_up',
    help: '1 when the dependency answered lately, 0 while it does not',
    labelNames: ['dependency'] as const,
    registers: [this.registry],
  });

  constructor(collectDefaults = true) {
    if (collectDefaults) {
      collectDefaultMetrics({ register: this.registry });
      // /metrics is unauthenticated (CONTRACT): the runtime's exact version is no stranger's business.
      this.registry.removeSingleMetric('nodejs_version_info');
    }
  }
}
