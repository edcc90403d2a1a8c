import { DomainError } from '../errors/domain-error';
import { rateLimitHeaders, type RateGroup, type RateLimiter } from './rate-limiter';

/** Counts one request; answers the headers for the response or throws 429 carrying them. */
export async function enforceRateLimit(limiter: RateLimiter, keyId: string, group: RateGroup): Promise<Record<string, string>> {
  const decision = await limiter.consume(keyId, group);
  const headers = rateLimitHeaders(decision);
  if (!decision.allowed) {
    throw new DomainError('rate_limit_exceeded', `Rate limit reached for ${group} requests: ${decision.limit} per minute per API key.`, {
      // OpenAI's code for it, which SDKs and retry middleware look for.
      code: 'rate_limit_exceeded',
      retryAfterSeconds: decision.resetSeconds,
      headers,
    });
  }
  return headers;
}
