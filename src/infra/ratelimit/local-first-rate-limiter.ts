import type Redis from 'ioredis';
import { RATE_LIMITS, RATE_WINDOW_SECONDS, type RateDecision, type RateGroup, type RateLimiter } from '../../domain/ratelimit/rate-limiter';
import type { Clock, TimerHandle } from '../../domain/ports/clock';
import { systemClock } from '../../domain/shared/system-clock';
import { windowIncrements, type IncrEach } from './window-increments';

const WINDOW_MS = RATE_WINDOW_SECONDS * 1000;
/** How long a decision may wait for Redis before this instance decides alone. */
export const SYNC_TIMEOUT_MS = 250;
/**
 * After Redis failed to answer (a stall, an outage), how long every decision is made here alone
 * before Redis is tried again, so a key's requests do not wait in turn on the previous one's
 * count, SYNC_TIMEOUT_MS each: through a 15 s stall that would allow one key 4 requests a second
 * per instance and keep 40 concurrent ones waiting up to 10 s.
 */
const LOCAL_AFTER_FAILURE_MS = 1000;
/** Counters sent to Redis in one script call. */
const MAX_COUNTERS_PER_SYNC = 512;
/**
 * How long the increment of a request admitted at once, with more than a fifth of the limit
 * left, may wait for others before it leaves for Redis. Nothing waits on it (the request is
 * answered), and sending each on the next turn was a script call and a reply per request at low
 * load (at one connection on the bench machine, about 0.2 ms of added latency). Closer to the
 * limit, and whenever a request waits for an increment, what is queued leaves on the next turn.
 */
export const DEFERRED_SYNC_MS = 10;

interface Counter {
  readonly redisKey: string;
  /** When the window ends (on the clock's monotonic time): from Redis once it answered, else a minute after this instance's first request. */
  endsAt: number;
  /** This window's count as Redis last answered it (every instance's admits); without Redis, this instance's. */
  known: number;
  /** Admits Redis never answered for (it was away): counted here on top of what it knows. */
  localOnly: number;
  /** Whether Redis has answered for this window yet (without Redis: always). */
  learned: boolean;
  /**
   * Redis's last count of the key's window just before this one (every instance's admits), when
   * this instance heard it: a quiet key's first request in a new window need not wait (see consume).
   */
  before?: number;
  /** This instance's last admit, on its way to Redis; settles when Redis answered or was given up on. */
  syncing: Promise<void> | null;
}

interface Queued {
  counter: Counter;
  settle: () => void;
}

/** Seconds from `now` until the counter's window ends, at least 1 (the Retry-After and reset headers). */
const resetSeconds = (counter: Counter, now: number): number => Math.max(1, Math.ceil((counter.endsAt - now) / 1000));
const refused = (limit: number, counter: Counter, now: number): RateDecision => ({
  allowed: false,
  limit,
  remaining: 0,
  resetSeconds: resetSeconds(counter, now),
});
/** Admitted as request number `counted` of the window. */
const admitted = (limit: number, counted: number, counter: Counter, now: number): RateDecision => ({
  allowed: true,
  limit,
  remaining: limit - counted,
  resetSeconds: resetSeconds(counter, now),
});

/**
 * Requests per minute per key and group, in fixed windows that start with a key's first request
 * (as rate-limiter-flexible's did), decided on this instance and counted in Redis behind the
 * decision.
 *
 * Every request is counted in Redis; the increments of one event-loop turn leave together, as one
 * script call, and each reply tells the instance what the other instances counted. Most requests
 * are decided without waiting for that reply: when the instance already knows the key's window
 * (Redis answered for it before) and the count it knows, plus its own admit still on its way,
 * leaves more than a tenth of the limit free, the request is admitted at once and its increment
 * follows. The others wait for their increment's reply and are decided on the count it gives:
 * a key's first request on this instance in a window (another instance may have counted the
 * window full), the last tenth of the limit, and a request that arrives while the same key's
 * previous admit is still on its way. A count at the limit is a 429 at once, without asking
 * Redis (a count never falls within its window).
 *
 * A quiet key's first request in a new window is the exception: when Redis last counted the
 * key's window just before at half the limit or less (every instance's admits), and that window
 * ended within the last minute, the request is admitted at once too. A key used a few times a
 * minute, which is most keys, would otherwise wait for Redis on its first request of every
 * window (in the bench at one connection, where each key comes round about once a minute, that
 * was a third of the streamed calls, 0.17 ms of the mean). It costs one request too many at most
 * per instance and window, and only if the other instances admitted the whole limit in the new
 * window first: the key's next request here waits for the reply, as above.
 *
 * What that costs in accuracy: a request decided at once trusts a count that may be behind the
 * other instances' admits since this one last heard from Redis, but only while a tenth of the
 * limit is left, so the limit holds exactly unless the instances together admit more than that
 * tenth between two replies (or, for a quiet key, one request per instance and window); one
 * instance alone is always exact. The increment of an admit made
 * with more than a fifth of the limit left may wait up to DEFERRED_SYNC_MS for company (fewer
 * script calls at low load); the next request of the same key on that instance sends it at
 * once. Per call it saves the round trip a synchronous check waits for (about 0.3 ms of latency
 * at one connection on the bench machine) and a script call per request. Kong's rate-limiting
 * plugin offers a similar trade (`sync_rate`); money never depends on it (credits are exact).
 *
 * Without Redis the counts are this instance's. While Redis does not answer, each instance counts
 * on its own with the full limit (so N instances allow up to N × the limit for the length of the
 * outage): requests keep being served, and `onFallback` logs and counts it.
 */
export class LocalFirstRateLimiter implements RateLimiter {
  private readonly counters = new Map<string, Counter>();
  private queue: Queued[] = [];
  /** A flush on the next turn is scheduled (someone waits for a reply). */
  private flushSoon = false;
  /** A deferred flush is scheduled (only admits already answered are queued). */
  private flushTimer: TimerHandle | null = null;
  private nextSweep = 0;
  /** Until then Redis is not waited for (LOCAL_AFTER_FAILURE_MS). */
  private localUntil = 0;
  private readonly incrEach: IncrEach | null;

  constructor(
    redis?: Redis,
    private readonly limits: Record<RateGroup, number> = RATE_LIMITS,
    private readonly onFallback: (err: unknown) => void = () => undefined,
    /** What the windows, the wait for Redis and the local spell after a failure are timed on. */
    private readonly clock: Clock = systemClock,
  ) {
    if (!redis) {
      this.incrEach = null;
      return;
    }
    this.incrEach = windowIncrements(redis);
  }

  async consume(keyId: string, group: RateGroup): Promise<RateDecision> {
    const limit = this.limits[group];
    for (;;) {
      const counter = this.counterOf(`rl:${group}:${keyId}`, this.clock.monotonic());
      const counted = counter.known + counter.localOnly + (counter.syncing ? 1 : 0);
      if (counted >= limit) return refused(limit, counter, this.clock.monotonic());
      if (counter.syncing) {
        // The key's previous admit is on its way to Redis: decide on what Redis answers to it.
        this.scheduleFlush(true);
        await counter.syncing;
        continue;
      }
      const tenth = Math.ceil(limit / 10);
      // A quiet key's first request of a window: its increment may wait for company too, as the
      // key's next request here waits for its reply whenever it is sent.
      const blind = !counter.learned && counted === 0 && this.quietBefore(counter, limit);
      const sure = blind || (counter.learned && counted + 1 + tenth <= limit);
      const farFromLimit = blind || (counter.learned && counted + 1 + 2 * tenth <= limit);
      const syncing = this.count(counter, !farFromLimit);
      if (sure || !syncing) return admitted(limit, counted + 1, counter, this.clock.monotonic());
      // Not sure of the count: this request's own increment decides.
      await syncing;
      const after = counter.known + counter.localOnly;
      const now = this.clock.monotonic();
      return after > limit ? refused(limit, counter, now) : admitted(limit, after, counter, now);
    }
  }

  /**
   * Whether a window's first request here may be admitted before Redis answers: the key's window
   * just before it ended within the last minute at no more than half the limit, every instance's
   * admits counted. Others would have to have admitted the whole limit since for this one to be
   * one too many, and it is one at most: the key's next request here waits for its reply.
   */
  private quietBefore(counter: Counter, limit: number): boolean {
    return counter.before !== undefined && counter.before * 2 <= limit;
  }

  /** The key's counter for the window running at `now`: a window starts with its first request, as in Redis. */
  private counterOf(name: string, now: number): Counter {
    if (now >= this.nextSweep) this.sweep(now);
    let counter = this.counters.get(name);
    if (!counter || (now >= counter.endsAt && !counter.syncing)) {
      // The window that just ended is remembered only if Redis counted it and it ended within the last window's length.
      const before = counter?.learned && this.incrEach && now < counter.endsAt + WINDOW_MS ? counter.known + counter.localOnly : undefined;
      counter = { redisKey: name, endsAt: now + WINDOW_MS, known: 0, localOnly: 0, learned: !this.incrEach, syncing: null, before };
      this.counters.set(name, counter);
    }
    return counter;
  }

  /**
   * Once a minute: counters whose window ended more than a window ago go (the key's next request
   * starts a new one); those that ended since stay, for what they tell of the key (quietBefore).
   */
  private sweep(now: number): void {
    this.nextSweep = now + WINDOW_MS;
    for (const [name, c] of this.counters) if (now >= c.endsAt + WINDOW_MS && !c.syncing) this.counters.delete(name);
  }

  /** What Redis answered for a counter: the count of its window, and when that window ends. */
  private learn(counter: Counter, count: number, leftMs: number, at: number): void {
    const endsAt = at + leftMs;
    // A window that ends well after the one we counted in is a new one (ours expired in Redis).
    if (endsAt > counter.endsAt + 1000) {
      counter.known = 0;
      counter.localOnly = 0;
    }
    counter.endsAt = endsAt;
    counter.known = Math.max(counter.known, count);
    counter.learned = true;
  }

  /**
   * Counts one admit: at once without Redis; else on its way there (answers the promise of its
   * reply), on the next turn when `awaited`, else within DEFERRED_SYNC_MS.
   */
  private count(counter: Counter, awaited: boolean): Promise<void> | null {
    if (!this.incrEach) {
      counter.known++;
      return null;
    }
    if (this.clock.monotonic() < this.localUntil) {
      // Redis just failed to answer: this admit is counted here, as one whose count timed out is.
      counter.localOnly++;
      return null;
    }
    const syncing = new Promise<void>((settle) => this.queue.push({ counter, settle }));
    counter.syncing = syncing;
    this.scheduleFlush(awaited);
    return syncing;
  }

  private scheduleFlush(soon: boolean): void {
    if (this.queue.length === 0 || this.flushSoon) return;
    if (soon) {
      this.flushSoon = true;
      // After the I/O of this turn: every request that arrived with this one is in the batch.
      setImmediate(this.flush);
    } else if (!this.flushTimer) {
      this.flushTimer = this.clock.setTimeout(this.flush, DEFERRED_SYNC_MS);
    }
  }

  private readonly flush = (): void => {
    this.flushSoon = false;
    this.clock.clearTimeout(this.flushTimer);
    this.flushTimer = null;
    while (this.queue.length > 0) this.sync(this.queue.splice(0, MAX_COUNTERS_PER_SYNC));
  };

  private sync(batch: Queued[]): void {
    let settled = false;
    const settle = (pairs: number[] | null) => {
      const at = this.clock.monotonic();
      if (settled) {
        // A late answer: the admit did reach Redis, and the count tells what the other instances did.
        if (pairs) {
          batch.forEach(({ counter }, i) => {
            counter.localOnly = Math.max(0, counter.localOnly - 1);
            this.learn(counter, pairs[2 * i] ?? 0, pairs[2 * i + 1] ?? 0, at);
          });
        }
        return;
      }
      settled = true;
      this.clock.clearTimeout(timer);
      this.localUntil = pairs ? 0 : at + LOCAL_AFTER_FAILURE_MS;
      batch.forEach((q, i) => {
        const { counter } = q;
        // Without an answer this instance counts its admit itself.
        if (pairs) this.learn(counter, pairs[2 * i] ?? 0, pairs[2 * i + 1] ?? 0, at);
        else counter.localOnly++;
        counter.syncing = null;
        q.settle();
      });
    };
    const fail = (err: unknown) => {
      if (!settled) this.onFallback(err);
      settle(null);
    };
    const timer = this.clock.setTimeout(() => fail(new Error(`Redis did not answer the rate-limit counts within ${SYNC_TIMEOUT_MS} ms`)), SYNC_TIMEOUT_MS);
    timer.unref();
    const keys = batch.map((q) => q.counter.redisKey);
    this.incrEach!(keys.length, ...keys, WINDOW_MS).then((pairs) => settle(pairs.map(Number)), fail);
  }
}
