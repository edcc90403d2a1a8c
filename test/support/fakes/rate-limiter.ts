/** A rate limiter that counts each key's requests per group in one window that never ends: a key is refused past its limit. */
import { RATE_LIMITS, RATE_WINDOW_SECONDS, type RateDecision, type RateGroup, type RateLimiter } from '../../../src/domain/ratelimit/rate-limiter';

export class FakeRateLimiter implements RateLimiter {
  /** Every request counted, in order. */
  readonly consumed: Array<{ keyId: string; group: RateGroup }> = [];

  constructor(private readonly limits: Record<RateGroup, number> = RATE_LIMITS) {}

  async consume(keyId: string, group: RateGroup): Promise<RateDecision> {
    this.consumed.push({ keyId, group });
    const count = this.consumed.filter((c) => c.keyId === keyId && c.group === group).length;
    const limit = this.limits[group];
    return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetSeconds: RATE_WINDOW_SECONDS };
  }
}
