/** SPEC limits: requests per minute per API key and group. */
export type RateGroup = 'chat' | 'image' | 'video';

export const RATE_LIMITS: Record<RateGroup, number> = { chat: 60, image: 30, video: 5 };
export const RATE_WINDOW_SECONDS = 60;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a request is allowed again (allowed=false) or the window resets. */
  resetSeconds: number;
}

/** A port with an in-process and a Redis implementation, chosen once from the config. */
export interface RateLimiter {
  consume(keyId: string, group: RateGroup): Promise<RateDecision>;
}

/** OpenAI's header family, on successful and rate-limited responses alike. */
export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    'x-ratelimit-limit-requests': String(d.limit),
    'x-ratelimit-remaining-requests': String(d.remaining),
    'x-ratelimit-reset-requests': `${d.resetSeconds}s`,
  };
}
