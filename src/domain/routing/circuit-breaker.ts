/**
 * One circuit breaker per upstream route. A route that failed at least half of at least 5 calls
 * in the last 30 s opens: it gets no traffic for 30 s. Then it is half-open: one call probes it
 * (one per instance); a success closes it, a failure opens it again for another 30 s.
 *
 * What counts as a failure is what the retry rules retry (a refused or reset connection, a
 * timeout, an upstream 408, 429 or 5xx): an upstream that answered "your request is wrong" is a
 * healthy upstream. The window is kept per second, 30 buckets a route, so its memory does not
 * grow with traffic.
 *
 * Shared across instances through a BreakerFeed when there is one (Redis): an instance that opens
 * a route, or closes it after a probe, tells the others, which open or close it as well; the
 * window itself stays each instance's own.
 */
import type { TopicFeed } from '../ports/topic-feed';

export type CircuitState = 'closed' | 'open' | 'half_open';

export const BREAKER_WINDOW_MS = 30_000;
export const BREAKER_MIN_CALLS = 5;
export const BREAKER_FAILURE_RATIO = 0.5;
export const BREAKER_OPEN_MS = 30_000;

const BUCKET_MS = 1_000;
const BUCKETS = BREAKER_WINDOW_MS / BUCKET_MS;

interface RouteCircuit {
  /** Per-second buckets: calls and failures, and which second each bucket holds. */
  calls: number[];
  failures: number[];
  seconds: number[];
  state: CircuitState;
  openedAt: number | null;
  /** Half-open: a probe is out. */
  probing: boolean;
  lastError: string | null;
}

export interface RouteHealth {
  id: string;
  state: CircuitState;
  window: { calls: number; failures: number };
  lastError: string | null;
  openedAt: Date | null;
}

export class CircuitBreakers {
  private readonly circuits = new Map<string, RouteCircuit>();
  /** Told when a route's state changes (the metrics' gauge). */
  onState: (routeId: string, state: CircuitState) => void = () => undefined;

  private readonly now: () => number;
  private readonly feed?: TopicFeed;
  private readonly minCalls: number;
  /**
   * What upstream a route id names here (a digest of provider, base URL and key name): a message
   * about a route id that names another upstream on the sender (another deployment, or a test,
   * on the same Redis) is not this route's news.
   */
  private readonly upstreamOf: (routeId: string) => string;

  constructor(options: { now?: () => number; feed?: TopicFeed; minCalls?: number; upstreamOf?: (routeId: string) => string } = {}) {
    this.now = options.now ?? Date.now;
    this.feed = options.feed;
    this.minCalls = options.minCalls ?? BREAKER_MIN_CALLS;
    this.upstreamOf = options.upstreamOf ?? (() => '-');
    this.feed?.subscribe((message) => this.heard(message));
  }

  /** The route's state now (an open route whose 30 s are over reads half-open). */
  state(routeId: string): CircuitState {
    const c = this.circuits.get(routeId);
    if (!c) return 'closed';
    if (c.state === 'open' && this.now() - c.openedAt! >= BREAKER_OPEN_MS) this.set(routeId, c, 'half_open');
    return c.state;
  }

  /** Whether a call may go to the route now: closed, or half-open with no probe out (this call becomes the probe). */
  admit(routeId: string): boolean {
    const state = this.state(routeId);
    if (state === 'closed') return true;
    if (state === 'open') return false;
    const c = this.circuits.get(routeId)!;
    if (c.probing) return false;
    c.probing = true;
    return true;
  }

  /** Whether the route could take a call now, without taking the probe. */
  available(routeId: string): boolean {
    const state = this.state(routeId);
    return state === 'closed' || (state === 'half_open' && !this.circuits.get(routeId)!.probing);
  }

  /** Milliseconds until some route of `routeIds` may be tried again (0 when one may now). */
  msUntilAvailable(routeIds: readonly string[]): number {
    let soonest = Infinity;
    for (const id of routeIds) {
      if (this.available(id)) return 0;
      const c = this.circuits.get(id)!;
      soonest = Math.min(soonest, c.state === 'open' ? BREAKER_OPEN_MS - (this.now() - c.openedAt!) : BUCKET_MS);
    }
    return Math.max(0, soonest);
  }

  record(routeId: string, ok: boolean, error?: string): void {
    const c = this.circuit(routeId);
    const second = Math.floor(this.now() / BUCKET_MS);
    const slot = second % BUCKETS;
    if (c.seconds[slot] !== second) {
      c.seconds[slot] = second;
      c.calls[slot] = 0;
      c.failures[slot] = 0;
    }
    c.calls[slot]++;
    if (!ok) {
      c.failures[slot]++;
      c.lastError = error ?? 'failed';
    }
    if (c.state === 'half_open' && c.probing) {
      c.probing = false;
      if (ok) this.close(routeId, c, true);
      else this.open(routeId, c, true);
      return;
    }
    if (!ok && c.state === 'closed') {
      const { calls, failures } = this.window(c);
      if (calls >= this.minCalls && failures >= calls * BREAKER_FAILURE_RATIO) this.open(routeId, c, true);
    }
  }

  /** A probe that never came back (its call was cut): the next call may probe. */
  releaseProbe(routeId: string): void {
    const c = this.circuits.get(routeId);
    if (c) c.probing = false;
  }

  health(routeId: string): RouteHealth {
    const state = this.state(routeId);
    const c = this.circuits.get(routeId);
    const window = c ? this.window(c) : { calls: 0, failures: 0 };
    return { id: routeId, state, window, lastError: c?.lastError ?? null, openedAt: c?.openedAt ? new Date(c.openedAt) : null };
  }

  private window(c: RouteCircuit): { calls: number; failures: number } {
    const oldest = Math.floor(this.now() / BUCKET_MS) - BUCKETS + 1;
    let calls = 0;
    let failures = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if (c.seconds[i] >= oldest) {
        calls += c.calls[i];
        failures += c.failures[i];
      }
    }
    return { calls, failures };
  }

  private circuit(routeId: string): RouteCircuit {
    let c = this.circuits.get(routeId);
    if (!c) {
      c = {
        calls: new Array<number>(BUCKETS).fill(0),
        failures: new Array<number>(BUCKETS).fill(0),
        seconds: new Array<number>(BUCKETS).fill(-1),
        state: 'closed',
        openedAt: null,
        probing: false,
        lastError: null,
      };
      this.circuits.set(routeId, c);
    }
    return c;
  }

  private open(routeId: string, c: RouteCircuit, tell: boolean, openedAt = this.now()): void {
    c.openedAt = openedAt;
    c.probing = false;
    this.set(routeId, c, 'open');
    // The message carries how long ago it opened, not a time: the instances' clocks may differ.
    if (tell) void this.feed?.publish(`open ${routeId} ${this.upstreamOf(routeId)} ${this.now() - openedAt}`).catch(() => undefined);
  }

  private close(routeId: string, c: RouteCircuit, tell: boolean): void {
    c.openedAt = null;
    c.probing = false;
    // A closed route starts a fresh window: the failures that opened it are behind it.
    c.calls.fill(0);
    c.failures.fill(0);
    this.set(routeId, c, 'closed');
    if (tell) void this.feed?.publish(`close ${routeId} ${this.upstreamOf(routeId)}`).catch(() => undefined);
  }

  private set(routeId: string, c: RouteCircuit, state: CircuitState): void {
    if (c.state === state) return;
    c.state = state;
    this.onState(routeId, state);
  }

  /** Another instance opened or closed a route. */
  private heard(message: string): void {
    const [what, routeId, upstream, agoMs] = message.split(' ');
    if (!routeId || upstream !== this.upstreamOf(routeId)) return;
    const c = this.circuit(routeId);
    if (what === 'open' && c.state !== 'open') this.open(routeId, c, false, this.now() - Math.max(0, Number(agoMs) || 0));
    if (what === 'close' && c.state !== 'closed') this.close(routeId, c, false);
  }
}
