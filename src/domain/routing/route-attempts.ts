/**
 * One client request over a model's upstream routes: which route each attempt goes to, which
 * failures are tried again, and when to stop.
 *
 * - Routes are taken by priority (lower first), and among the available routes of one priority
 *   by weight, at random; a route whose circuit is open is passed by.
 * - A retryable failure (see AttemptFailure) is tried again on another available route when
 *   there is one, else on the same route: at once when the upstream said nothing of when, after
 *   its Retry-After when that fits in the budget, and not at all when it does not.
 * - Any other failure is the answer. So is the last one: after `attempts` calls, past
 *   `budgetSeconds`, or once the client is gone (its signal aborted).
 * - A model whose every route is open answers 503 `upstream_unavailable` at once, with the wait
 *   until one may be tried as Retry-After, without calling anything.
 *
 * The caller is charged once for the answer it gets, whatever the attempts: billing sits around
 * this, not inside it.
 */
import { DomainError } from '../errors/domain-error';
import type { RetryPolicy } from '../catalog/model';
import { pause, type CallSignal } from '../shared/call-signal';
import type { CircuitBreakers } from './circuit-breaker';
import { NO_TRACING, type AttemptOutcome, type Tracing } from '../ports/tracing';

export interface RoutedAttemptFailure {
  /** Try again (on another route when there is one). */
  retryable: boolean;
  /** The upstream failed (counted against its circuit), as opposed to refusing the request as the client's fault. */
  upstreamFault: boolean;
  retryAfterSeconds?: number;
  summary: string;
}

/** What the operator sees of every attempt: metrics and the JSON log. */
export interface AttemptReport {
  route: string;
  model: string;
  /** ok; failed: the upstream failed; rejected: it refused the request as the client's fault; cancelled: the client left. */
  outcome: AttemptOutcome;
  seconds: number;
  retried: boolean;
  error?: string;
}

export interface RoutingDeps {
  breakers: CircuitBreakers;
  classify: (err: unknown) => RoutedAttemptFailure;
  report: (attempt: AttemptReport) => void;
  now?: () => number;
  random?: () => number;
  sleep?: (ms: number, signal?: CallSignal) => Promise<void>;
  /** A client span per attempt, when tracing is on. */
  tracing?: Tracing;
}

export interface RouteLike {
  id: string;
  priority: number;
  weight: number;
  /** Named on the attempt's span. */
  provider?: string;
  upstreamModel?: string;
}

export const allRoutesOpen = (retryAfterSeconds: number) =>
  new DomainError('service_unavailable', 'Every upstream route of this model is failing; retry later.', {
    code: 'upstream_unavailable',
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)),
  });

/** The next route to try: the first priority with an available route, a weighted draw among those, untried ones first. */
export function pickRoute<R extends RouteLike>(
  routes: readonly R[],
  available: (r: R) => boolean,
  tried: ReadonlySet<string>,
  random: () => number,
): R | undefined {
  const open = routes.filter(available);
  const fresh = open.filter((r) => !tried.has(r.id));
  const pool = fresh.length > 0 ? fresh : open;
  if (pool.length === 0) return undefined;
  const top = Math.min(...pool.map((r) => r.priority));
  const tier = pool.filter((r) => r.priority === top);
  const total = tier.reduce((sum, r) => sum + r.weight, 0);
  let draw = random() * total;
  for (const r of tier) {
    draw -= r.weight;
    if (draw < 0) return r;
  }
  return tier[tier.length - 1];
}

export async function attemptRoutes<R extends RouteLike, T>(
  deps: RoutingDeps,
  model: { id: string; routes: readonly R[]; retry: RetryPolicy },
  signal: CallSignal | undefined,
  call: (route: R, attempt: number) => Promise<T>,
): Promise<T> {
  const now = deps.now ?? Date.now;
  const random = deps.random ?? Math.random;
  const sleep = deps.sleep ?? pause;
  const tracing = deps.tracing ?? NO_TRACING;
  const deadline = now() + model.retry.budgetSeconds * 1000;
  const tried = new Set<string>();
  let lastError: unknown;
  for (let attempt = 0; attempt < model.retry.attempts; attempt++) {
    const route = pickRoute(model.routes, (r) => deps.breakers.available(r.id), tried, random);
    if (!route || !deps.breakers.admit(route.id)) {
      if (lastError !== undefined) throw lastError as Error;
      throw allRoutesOpen(deps.breakers.msUntilAvailable(model.routes.map((r) => r.id)) / 1000);
    }
    tried.add(route.id);
    const started = now();
    const span = tracing.attempt({ model: model.id, route: route.id, provider: route.provider, upstreamModel: route.upstreamModel, attempt });
    try {
      const answer = await span.run(() => call(route, attempt));
      deps.breakers.record(route.id, true);
      span.end('ok');
      deps.report({ route: route.id, model: model.id, outcome: 'ok', seconds: (now() - started) / 1000, retried: false });
      return answer;
    } catch (err) {
      const failure = deps.classify(err);
      const aborted = signal?.aborted === true;
      // A client that left is no verdict on the upstream: its probe is given back, nothing recorded.
      if (aborted) deps.breakers.releaseProbe(route.id);
      else deps.breakers.record(route.id, !failure.upstreamFault, failure.summary);
      lastError = err;
      // The last attempt allowed waits for nothing: its failure is the answer.
      const another = attempt + 1 < model.retry.attempts;
      const outcome = aborted ? 'cancelled' : failure.upstreamFault ? 'failed' : 'rejected';
      span.end(outcome, failure.summary);
      const next = another && failure.retryable && !aborted ? await waitForNext(deps, model, route, tried, failure, deadline, now, sleep, signal) : false;
      deps.report({
        route: route.id,
        model: model.id,
        outcome,
        seconds: (now() - started) / 1000,
        retried: next,
        error: failure.summary,
      });
      if (!next) throw err;
    }
  }
  throw lastError as Error;
}

/** Whether to try again, after waiting what the upstream asked when the same route is next; false when the budget does not allow it. */
async function waitForNext<R extends RouteLike>(
  deps: RoutingDeps,
  model: { routes: readonly R[] },
  failed: R,
  tried: ReadonlySet<string>,
  failure: RoutedAttemptFailure,
  deadline: number,
  now: () => number,
  sleep: (ms: number, signal?: CallSignal) => Promise<void>,
  signal: CallSignal | undefined,
): Promise<boolean> {
  if (now() >= deadline) return false;
  const another = model.routes.some((r) => r.id !== failed.id && !tried.has(r.id) && deps.breakers.available(r.id));
  if (another) return true;
  const waitMs = (failure.retryAfterSeconds ?? 0) * 1000;
  if (now() + waitMs >= deadline) return false;
  if (waitMs > 0) await sleep(waitMs, signal);
  return signal?.aborted !== true;
}
