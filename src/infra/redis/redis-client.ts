import Redis from 'ioredis';

/**
 * One connection for commands; pub/sub needs connections of its own (see the event bus).
 * Commands fail at once while Redis is away (no offline queue, one retry) so callers fall back
 * instead of waiting; the client reconnects by itself, backing off up to 2 s.
 */
export function createRedis(url: string, name: string, onError: (err: Error) => void = () => undefined): Redis {
  const redis = new Redis(url, {
    connectionName: name,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2_000,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    // Commands issued in one event-loop turn (the rate-limit scripts of every request that
    // arrived together) leave in one write: a socket write per command cost ~6% of the bench's CPU.
    enableAutoPipelining: true,
  });
  redis.on('error', onError);
  return redis;
}

/** Waits until the client is ready, at most `ms` (start-up with Redis down goes on degraded). */
export function whenReady(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    redis.on('ready', onReady);
  });
}
