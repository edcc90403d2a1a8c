import { useRef } from 'preact/hooks';
import { ApiError } from './client';

/** A new key: a UUID, or 128 random bits in hex where randomUUID is missing (a page served over plain http). */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Answers after which no job exists under the key: the gateway refused the request itself (a 4xx
 * the gateway stores for the key and would answer again to every retry), or GraphQL refused the
 * operation before it ran. After anything else (no answer, a server error, the same key still
 * running) the job may exist, so the retry must carry the same key.
 */
const REFUSED = new Set([
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'insufficient_credits',
  'model_forbidden',
  'not_found_error',
  'request_too_large',
  'content_policy_violation',
  'rate_limit_exceeded',
  'daily_cap_exceeded',
  'budget_exceeded',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
]);

export function nothingQueued(err: unknown): boolean {
  return err instanceof ApiError && (REFUSED.has(err.code) || err.reason === 'idempotency_key_reused');
}

/**
 * One idempotency key per intended job. The same request (operation and input, as JSON) sent
 * again gets the same key, so a retry after a lost answer is answered the job the first attempt
 * queued instead of queueing (and charging) another; a changed request, a queued job or a refusal
 * (`nothingQueued`) starts a new key.
 */
export function useIdempotencyKey() {
  const held = useRef<{ key: string; request: string } | null>(null);
  return {
    keyFor(request: string): string {
      if (held.current?.request !== request) held.current = { key: newIdempotencyKey(), request };
      return held.current.key;
    },
    /** After the call: `err` undefined when it succeeded. */
    settle(err?: unknown): void {
      if (err === undefined || nothingQueued(err)) held.current = null;
    },
  };
}
