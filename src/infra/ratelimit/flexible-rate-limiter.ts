import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type Redis from 'ioredis';
import { RATE_LIMITS, RATE_WINDOW_SECONDS, type RateDecision, type RateGroup, type RateLimiter } from '../../domain/ratelimit/rate-limiter';

/**
 * Fixed one-minute windows per key and group (rate-limiter-flexible). In-process without Redis;
 * with Redis every instance counts against the same window.
 */
export class FlexibleRateLimiter implements RateLimiter {
  private readonly limiters: Record<RateGroup, RateLimiterAbstract>;

  constructor(redis?: Redis, limits: Record<RateGroup, number> = RATE_LIMITS) {
    const make = (group: RateGroup): RateLimiterAbstract => {
      const opts = { keyPrefix: `rl:${group}`, points: limits[group], duration: RATE_WINDOW_SECONDS };
      return redis ? new RateLimiterRedis({ ...opts, storeClient: redis, useRedisPackage: false }) : new RateLimiterMemory(opts);
    };
    this.limiters = { chat: make('chat'), image: make('image'), video: make('video') };
  }

  async consume(keyId: string, group: RateGroup): Promise<RateDecision> {
    const limiter = this.limiters[group];
    const limit = limiter.points;
    try {
      const res = await limiter.consume(keyId, 1);
      return { allowed: true, limit, remaining: res.remainingPoints, resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        return { allowed: false, limit, remaining: 0, resetSeconds: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
      }
      throw err;
    }
  }
}
