import Redis from 'ioredis';

/** One connection for commands; pub/sub needs connections of its own (see the event bus). */
export function createRedis(url: string, name: string): Redis {
  return new Redis(url, { connectionName: name, maxRetriesPerRequest: 3, enableOfflineQueue: true, lazyConnect: false });
}
