/**
 * What the operator sees of upstream attempts: each one counted and timed by route (Prometheus)
 * and logged as one JSON line (route, model, outcome, duration, whether it was retried, the
 * failure's status or transport code; never a body), and each route's circuit state as a gauge.
 */
import type { AttemptReport } from '../../domain/routing/route-attempts';
import type { CircuitState } from '../../domain/routing/circuit-breaker';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

const STATE_VALUE: Record<CircuitState, number> = { closed: 0, half_open: 1, open: 2 };

export function upstreamAttemptReporter(metrics: Metrics, logger: Logger) {
  return {
    report(a: AttemptReport): void {
      metrics.upstreamCalls.inc({ route: a.route, model: a.model, outcome: a.outcome });
      metrics.upstreamCallSeconds.observe({ route: a.route }, a.seconds);
      const line = {
        route: a.route,
        model: a.model,
        outcome: a.outcome,
        durationMs: Math.round(a.seconds * 1000),
        retried: a.retried,
        ...(a.error ? { error: a.error } : {}),
      };
      // A success, or a call its client left, is routine (debug); a failure is what an operator looks for.
      if (a.outcome === 'ok' || a.outcome === 'cancelled') logger.debug(line, 'upstream attempt');
      else logger.warn(line, 'upstream attempt failed');
    },
    circuit(route: string, state: CircuitState): void {
      metrics.upstreamCircuitState.set({ route }, STATE_VALUE[state]);
      if (state !== 'half_open') logger.warn({ route, state }, state === 'open' ? 'upstream route opened: no traffic for 30 s' : 'upstream route closed again');
    },
  };
}
