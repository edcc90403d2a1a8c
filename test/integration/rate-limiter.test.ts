/**
 * The rate limiter against a real Redis of the test's own: one instance admits exactly the limit,
 * instances sharing Redis admit at most one extra request each per window, the count survives
 * in Redis between instances, and with Redis gone every request is still decided (locally).
 * Where what is tested waits on the limiter's time (its deferred counts, the deadline on Redis's
 * answer, the end of a window) the limiter runs on a fake clock the test steps.
 */
import Redis from 'ioredis';
import { DEFERRED_SYNC_MS, LocalFirstRateLimiter, SYNC_TIMEOUT_MS } from '../../src/infra/ratelimit/local-first-rate-limiter';
import type { RateGroup } from '../../src/domain/ratelimit/rate-limiter';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../support/own-redis';
import { pollUntil } from '../support/poll';
import { closedRedis } from '../support/redis-close';
import { fakeClock, type FakeClock } from '../support/fake-clock';

const LIMITS: Record<RateGroup, number> = { chat: 60, image: 30, video: 5 };
const maybe = hasRedisServer() ? describe : describe.skip;
/**
 * `work`, with the limiters' clock stepped through each deferred count's wait as it is armed, and
 * through nothing else: Redis's answers come as fast as this machine gives them, and the deadline
 * on them (SYNC_TIMEOUT_MS) is never reached, however busy the machine is.
 */
async function steppingDeferredCounts<T>(clock: FakeClock, work: Promise<T>): Promise<T> {
  const finished = work.then(
    () => null,
    () => null,
  );
  for (;;) {
    const next = await Promise.race([clock.whenArmed((t) => t.delayMs === DEFERRED_SYNC_MS), finished]);
    if (!next) return work;
    await clock.tickAsync(Math.max(1, next.dueInMs));
  }
}

/**
 * `decision`, with the limiter's clock stepped through the deadline on Redis's count if the
 * decision waits on one (and only then): answers it and how far the clock was stepped.
 */
async function decided<T>(clock: FakeClock, decision: Promise<T>): Promise<{ value: T; steppedMs: number }> {
  const deadline = clock.whenArmed((t) => t.delayMs === SYNC_TIMEOUT_MS && t.dueInMs > 0);
  const first = await Promise.race([decision.then(() => 'decided' as const), deadline.then(() => 'waits' as const)]);
  if (first === 'decided') return { value: await decision, steppedMs: 0 };
  await clock.tickAsync(SYNC_TIMEOUT_MS);
  return { value: await decision, steppedMs: SYNC_TIMEOUT_MS };
}

maybe('local-first rate limits on a shared Redis', () => {
  let server: OwnRedis;
  const clients: Redis[] = [];
  const client = () => {
    const c = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true, lazyConnect: false });
    c.on('error', () => undefined);
    clients.push(c);
    return c;
  };
  const ready = (c: Redis) => new Promise<void>((resolve) => (c.status === 'ready' ? resolve() : c.once('ready', () => resolve())));
  let key = 0;
  const freshKey = () => `key_${Date.now()}_${key++}`;

  beforeAll(async () => {
    server = await startOwnRedis();
  });
  afterAll(async () => {
    // Until every connection has ended (closedRedis): disconnect() alone left a 2 s timer each.
    await Promise.all(clients.map((c) => closedRedis(c)));
    server.cleanup();
  });

  test('one instance, 100 concurrent requests on one key: exactly the limit admitted, remaining counts down, the rest 429 with a reset', async () => {
    const redis = client();
    await ready(redis);
    const limiter = new LocalFirstRateLimiter(redis, LIMITS);
    const id = freshKey();
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.consume(id, 'chat')));
    const admitted = decisions.filter((d) => d.allowed);
    expect(admitted).toHaveLength(60);
    expect(admitted.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    for (const d of decisions.filter((d) => !d.allowed)) {
      expect(d).toMatchObject({ limit: 60, remaining: 0 });
      expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(d.resetSeconds).toBeLessThanOrEqual(60);
    }
    // Every admit reached Redis: another instance starting now sees the window full.
    const otherRedis = client();
    await ready(otherRedis);
    const other = new LocalFirstRateLimiter(otherRedis, LIMITS);
    // Its first request on the key waits for Redis's count (it knows nothing of the window yet): refused.
    const first = await other.consume(id, 'chat');
    expect(first).toMatchObject({ allowed: false, remaining: 0 });
    // It learnt the window from Redis: it ends when the first instance's does, not a minute after its own first request.
    expect(first.resetSeconds).toBeLessThanOrEqual(decisions[0].resetSeconds);
    expect((await other.consume(id, 'chat')).allowed).toBe(false);
  });

  test('two instances taking turns request by request: exactly the limit, then 429 on both', async () => {
    const a = client();
    const b = client();
    await Promise.all([ready(a), ready(b)]);
    const clock = fakeClock();
    const limiters = [new LocalFirstRateLimiter(a, LIMITS, undefined, clock), new LocalFirstRateLimiter(b, LIMITS, undefined, clock)];
    for (const group of ['chat', 'image', 'video'] as const) {
      const id = freshKey();
      const allowed: boolean[] = [];
      for (let i = 0; i < LIMITS[group] + 10; i++) {
        allowed.push((await limiters[i % 2].consume(id, group)).allowed);
        // As an HTTP client would: the next request after this one's answer, a moment later.
        await clock.tickAsync(2);
      }
      expect(allowed.filter(Boolean)).toHaveLength(LIMITS[group]);
      expect(allowed.slice(LIMITS[group])).toEqual(Array(10).fill(false));
    }
  });

  test('a limit spent on one instance is spent on the other: its first request is a 429', async () => {
    const a = client();
    const b = client();
    await Promise.all([ready(a), ready(b)]);
    const [one, two] = [new LocalFirstRateLimiter(a, LIMITS), new LocalFirstRateLimiter(b, LIMITS)];
    const id = freshKey();
    for (let i = 0; i < 5; i++) expect((await one.consume(id, 'video')).allowed).toBe(true);
    // Until Redis holds the five.
    await pollUntil(
      async () => Number(await a.get(`rl:video:${id}`)),
      (n) => n >= 5,
      5_000,
      10,
    );
    expect((await two.consume(id, 'video')).allowed).toBe(false);
  });

  test('three instances sharing Redis, 300 concurrent requests spread over them: at most limit + 2 admitted, at least the limit', async () => {
    const clock = fakeClock();
    const limiters = [0, 1, 2].map(() => new LocalFirstRateLimiter(client(), LIMITS, undefined, clock));
    await Promise.all(clients.map(ready));
    for (const group of ['chat', 'image', 'video'] as const) {
      const id = freshKey();
      const decisions = await steppingDeferredCounts(clock, Promise.all(Array.from({ length: 300 }, (_, i) => limiters[i % 3].consume(id, group))));
      const admitted = decisions.filter((d) => d.allowed).length;
      expect(admitted).toBeGreaterThanOrEqual(LIMITS[group]);
      expect(admitted).toBeLessThanOrEqual(LIMITS[group] + 2);
    }
  });

  test('admits made far from the limit are counted in Redis within milliseconds, none lost, in fewer script calls than requests', async () => {
    const redis = client();
    await ready(redis);
    const clock = fakeClock();
    const limiter = new LocalFirstRateLimiter(redis, LIMITS, undefined, clock);
    const ids = Array.from({ length: 20 }, freshKey);
    // Each key's first request waits for Redis (the window is unknown); then five more each,
    // one connection's way (one at a time), all far from the limit of 60.
    for (const id of ids) expect((await limiter.consume(id, 'chat')).allowed).toBe(true);
    const before = Number((await redis.info('commandstats')).match(/cmdstat_evalsha:calls=(\d+)/)?.[1] ?? 0);
    for (let round = 0; round < 5; round++) for (const id of ids) expect((await limiter.consume(id, 'chat')).allowed).toBe(true);
    // The last increments wait DEFERRED_SYNC_MS (10 ms, stepped here) for company: then until Redis
    // counts all six of every key; none lost, none extra.
    await clock.tickAsync(DEFERRED_SYNC_MS);
    const counts = async () => (await redis.mget(...ids.map((id) => `rl:chat:${id}`))).map(Number);
    await pollUntil(counts, (c) => c.every((n) => n >= 6), 10_000, 10);
    expect(await counts()).toEqual(ids.map(() => 6));
    const after = Number((await redis.info('commandstats')).match(/cmdstat_evalsha:calls=(\d+)/)?.[1] ?? 0);
    // 100 admits; the INFO calls themselves are not script calls.
    expect(after - before).toBeGreaterThan(0);
    expect(after - before).toBeLessThan(100);
  });

  test('groups and keys are counted apart', async () => {
    const redis = client();
    await ready(redis);
    const limiter = new LocalFirstRateLimiter(redis, LIMITS);
    const id = freshKey();
    // The window starts with the key's first request: a minute from now.
    expect((await limiter.consume(id, 'video')).resetSeconds).toBe(60);
    for (let i = 0; i < 4; i++) expect((await limiter.consume(id, 'video')).allowed).toBe(true);
    expect((await limiter.consume(id, 'video')).allowed).toBe(false);
    expect((await limiter.consume(id, 'image')).allowed).toBe(true);
    expect((await limiter.consume(freshKey(), 'video')).allowed).toBe(true);
  });

  test('a new window of a key quiet in its last one: its first request is admitted without waiting for Redis, and counted there; a busy key waits', async () => {
    const redis = client();
    const admin = client();
    await Promise.all([ready(redis), ready(admin)]);
    const clock = fakeClock();
    const limiter = new LocalFirstRateLimiter(redis, LIMITS, undefined, clock);
    const quiet = freshKey();
    const busy = freshKey();
    // A window's worth of use each: 2 requests for the quiet key, 31 of the 60 for the busy one.
    for (let i = 0; i < 2; i++) expect((await limiter.consume(quiet, 'chat')).allowed).toBe(true);
    for (let i = 0; i < 31; i++) expect((await limiter.consume(busy, 'chat')).allowed).toBe(true);
    // Both windows end in a second instead of a minute; one more admit each learns it (its reply
    // carries the new end). The admits' increments leave within 10 ms (stepped here): they must
    // reach Redis before the shortened window ends, seen here.
    await admin.pexpire(`rl:chat:${quiet}`, 1_000);
    await admin.pexpire(`rl:chat:${busy}`, 1_000);
    expect((await limiter.consume(quiet, 'chat')).allowed).toBe(true);
    expect((await limiter.consume(busy, 'chat')).allowed).toBe(true);
    await clock.tickAsync(10);
    const both = async () => (await admin.mget(`rl:chat:${quiet}`, `rl:chat:${busy}`)).map(Number);
    expect(await pollUntil(both, ([q, b]) => q !== 2 && b !== 31, 1_000, 10)).toEqual([3, 32]);
    // The limiter heard those replies by now, so its windows end within the second from now, on
    // its clock; then until Redis (on its own) has ended them too.
    await clock.tickAsync(1_100);
    await pollUntil(
      () => admin.exists(`rl:chat:${quiet}`, `rl:chat:${busy}`),
      (n) => n === 0,
      5_000,
      20,
    );

    // Redis holds every command for two seconds: only a decision that does not wait for it comes
    // back meanwhile; the others wait for Redis's count, up to the limiter's deadline on it.
    await admin.call('client', 'pause', '2000', 'all');
    const settled: string[] = [];
    const track = (name: string, p: Promise<{ allowed: boolean }>) => p.then((d) => (settled.push(name), d));
    const quietFirst = track('quiet first', limiter.consume(quiet, 'chat'));
    const quietSecond = track('quiet second', limiter.consume(quiet, 'chat'));
    const busyFirst = track('busy first', limiter.consume(busy, 'chat'));
    // Decided without waiting for Redis: when it is answered, nothing that waits for Redis is.
    expect((await quietFirst).allowed).toBe(true);
    expect(settled).toEqual(['quiet first']);
    // The quiet key's second request waits for the first's count, so one too many is the most it can cost.
    // The others wait on Redis's count, with a deadline of 250 ms: still waiting just before it, decided at it.
    await clock.whenArmed((t) => t.delayMs === SYNC_TIMEOUT_MS);
    await clock.tickAsync(SYNC_TIMEOUT_MS - 1);
    expect(settled).toEqual(['quiet first']);
    await clock.tickAsync(1);
    expect((await quietSecond).allowed).toBe(true);
    expect((await busyFirst).allowed).toBe(true);
    expect(settled[0]).toBe('quiet first');
    // Redis counted the first once the pause is over.
    await pollUntil(
      async () => Number(await admin.get(`rl:chat:${quiet}`)),
      (n) => n >= 1,
      5_000,
      20,
    );
  });

  test('Redis gone: every request is still decided, on this instance alone, and the fallback is reported', async () => {
    const own = await startOwnRedis();
    const redis = new Redis(own.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, enableAutoPipelining: true, retryStrategy: () => 200 });
    redis.on('error', () => undefined);
    try {
      await ready(redis);
      const failures: unknown[] = [];
      const clock = fakeClock();
      const limiter = new LocalFirstRateLimiter(redis, LIMITS, (err) => failures.push(err), clock);
      const id = freshKey();
      expect((await limiter.consume(id, 'video')).allowed).toBe(true);
      own.stop();
      const decisions = [];
      let steppedMs = 0;
      for (let i = 0; i < 6; i++) {
        const d = await decided(clock, limiter.consume(id, 'video'));
        decisions.push(d.value);
        steppedMs += d.steppedMs;
      }
      // 5 a minute, counted locally through the outage: 4 more admitted, then 429s.
      expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, false, false]);
      // No decision waited on Redis beyond one count deadline: after it, the instance counts alone.
      expect(steppedMs).toBeLessThanOrEqual(SYNC_TIMEOUT_MS);
      expect(failures.length).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
      own.cleanup();
    }
  });

  // Through a Redis stall, a key's requests must not wait in turn on the previous one's count
  // (the 250 ms deadline each): 40 concurrent ones would take 10 s.
  test("Redis stalled: a key's concurrent requests are all decided within one count deadline, not one deadline after another; Redis is asked again after it", async () => {
    const redis = client();
    const admin = client();
    await Promise.all([ready(redis), ready(admin)]);
    const failures: unknown[] = [];
    const clock = fakeClock();
    const limiter = new LocalFirstRateLimiter(redis, LIMITS, (err) => failures.push(err), clock);
    const id = freshKey();
    // Near the limit, so every request wants its count answered: 50 of the 60 used.
    for (let i = 0; i < 50; i++) await limiter.consume(id, 'chat');
    await clock.tickAsync(10);
    await admin.call('client', 'pause', '4000', 'all');
    let decidedCount = 0;
    const decisions = Array.from({ length: 20 }, () => limiter.consume(id, 'chat').then((d) => (decidedCount++, d)));
    // One count deadline (250 ms) decides them all; waiting in turn, each would arm a deadline of its own after it.
    await clock.whenArmed((t) => t.delayMs === SYNC_TIMEOUT_MS);
    await clock.tickAsync(SYNC_TIMEOUT_MS);
    await pollUntil(
      async () => decidedCount === 20 || clock.armed().some((t) => t.delayMs === SYNC_TIMEOUT_MS),
      (over) => over,
      5_000,
      10,
    );
    expect(decidedCount).toBe(20);
    // The limit still holds, counted here: 10 more, then 429s.
    expect((await Promise.all(decisions)).filter((d) => d.allowed)).toHaveLength(10);
    expect(failures.length).toBeGreaterThan(0);
    // Redis answers again once the pause is over (this command waits for it), and the limiter's spell alone (a second) has passed.
    await admin.ping();
    await clock.tickAsync(1_000);
    // Redis answers again: a request of a new key is counted there.
    const fresh = freshKey();
    expect((await limiter.consume(fresh, 'chat')).allowed).toBe(true);
    await pollUntil(
      async () => Number(await admin.get(`rl:chat:${fresh}`)),
      (n) => n >= 1,
      5_000,
      10,
    );
    expect(Number(await admin.get(`rl:chat:${fresh}`))).toBe(1);
  }, 20_000);

  test('without Redis: exactly the limit, in-process', async () => {
    const limiter = new LocalFirstRateLimiter(undefined, LIMITS);
    const id = freshKey();
    const decisions = await Promise.all(Array.from({ length: 40 }, () => limiter.consume(id, 'image')));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(30);
  });
});
