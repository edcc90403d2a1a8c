import Redis from 'ioredis';

/**
 * One connection for commands; pub/sub needs connections of its own (see the event bus).
 * Commands fail at once while Redis is away (no offline queue, one retry) so callers fall back
 * instead of waiting; the client reconnects by itself, backing off up to 2 s. A Redis that is
 * reachable but does not answer (a partition: the socket stays open, nothing comes back) fails
 * a command after COMMAND_TIMEOUT_MS: without it a request that published an event after its
 * charge waited for the whole partition, its client long gone.
 */
export const COMMAND_TIMEOUT_MS = 1_000;

export function createRedis(url: string, name: string, onError: (err: Error) => void = () => undefined): Redis {
  const redis = new Redis(url, {
    connectionName: name,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2_000,
    commandTimeout: COMMAND_TIMEOUT_MS,
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

/**
 * Pub/sub connections never see a command fail in a partition (they only wait for messages), so
 * they are asked for a PING every `everyMs`; one not answered within `timeoutMs` drops the
 * connection, which then reconnects: its 'close' is what the topic feeds and the event bus treat
 * as a gap (caches read the database, subscriptions re-read on return), as they do when Redis
 * goes away outright. Answers a stop function.
 */
export function watchLiveness(connection: Redis, everyMs = 1_000, timeoutMs = 1_500): () => void {
  let waiting = false;
  const timer = setInterval(() => {
    if (waiting || connection.status !== 'ready') return;
    waiting = true;
    let answered = false;
    const deadline = setTimeout(() => {
      if (!answered) connection.disconnect(true);
    }, timeoutMs);
    connection
      .ping()
      .then(
        () => (answered = true),
        () => undefined,
      )
      .finally(() => {
        clearTimeout(deadline);
        waiting = false;
      });
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * A pub/sub connection beside `publisher`: subscribing may wait for the connection (offline queue,
 * no command deadline, unlike commands), and it is watched for silence (watchLiveness).
 */
export function subscriberOf(publisher: Redis, connectionName: string): { connection: Redis; stop: () => void } {
  const connection = publisher.duplicate({ connectionName, enableOfflineQueue: true, maxRetriesPerRequest: null, commandTimeout: undefined });
  return { connection, stop: watchLiveness(connection) };
}
