import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type Redis from 'ioredis';
import { RATE_LIMITS, RATE_WINDOW_SECONDS, type RateDecision, type RateGroup, type RateLimiter } from '../../domain/ratelimit/rate-limiter';

/**
 * Fixed one-minute windows per key and group (rate-limiter-flexible). In-process without Redis;
 * with Redis every instance counts against the same window. While Redis does not answer, each
 * instance counts on its own with the full limit (so N instances allow up to N × the limit for
 * the length of the outage): requests keep being served, and `onFallback` logs and counts it.
 */
export class FlexibleRateLimiter implements RateLimiter {
  private readonly limiters: Record<RateGroup, RateLimiterAbstract>;
  private readonly local: Record<RateGroup, RateLimiterAbstract>;

  constructor(
    redis?: Redis,
    limits: Record<RateGroup, number> = RATE_LIMITS,
    private readonly onFallback: (err: unknown) => void = () => undefined,
  ) {
    const memory = (group: RateGroup) => new RateLimiterMemory({ keyPrefix: `rl:${group}`, points: limits[group], duration: RATE_WINDOW_SECONDS });
    const make = (group: RateGroup): RateLimiterAbstract => {
      const opts = { keyPrefix: `rl:${group}`, points: limits[group], duration: RATE_WINDOW_SECONDS };
      return redis ? new RateLimiterRedis({ ...opts, storeClient: redis, useRedisPackage: false }) : memory(group);
    };
    this.limiters = { chat: make('chat'), image: make('image'), video: make('video') };
    this.local = redis ? { chat: memory('chat'), image: memory('image'), video: memory('video') } : this.limiters;
  }

  async consume(keyId: string, group: RateGroup): Promise<RateDecision> {
    try {
      return await this.decide(this.limiters[group], keyId);
    } catch (err) {
      if (this.local === this.limiters) throw err;
      this.onFallback(err);
      return this.decide(this.local[group], keyId);
    }
  }

  private async decide(limiter: RateLimiterAbstract, keyId: string): Promise<RateDecision> {
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
