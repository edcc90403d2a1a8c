/**
 * Turns what an upstream answered (a status and a body) into the one DomainError the caller
 * sees. The wire message is always one of ours: an upstream body can carry internals, echo a
 * (masked) key or a signed URL, so it only travels in `cause`, for the logs.
 */
import { contentPolicyViolation, DomainError, upstreamError } from '../../domain/errors/domain-error';

/** Carried as `cause` of the DomainError: enough for an operator, never shown to a client. */
export class UpstreamHttpError extends Error {
  constructor(
    readonly status: number,
    /** The first kilobyte of the upstream body, for the logs. */
    readonly bodySnippet: string,
  ) {
    super(`Upstream answered HTTP ${status}`);
    this.name = 'UpstreamHttpError';
  }
}

// `content_policy_violation` is what DALL·E-era OpenAI and most compatible servers send;
// gpt-image models say `moderation_blocked`. Servers that only put it in prose say "content
// policy" or "safety system" in the message.
const POLICY_CODES = new Set(['content_policy_violation', 'moderation_blocked']);
const POLICY_WORDS = /content[\s_-]?policy|safety/i;

/**
 * True when a 400/422 body says the prompt was refused on content grounds. Reads the OpenAI
 * shape (`error: { code, type, message }`) and the FastAPI/fal shape (`detail`: a string or a
 * list of `{ type, msg }`). Only codes and messages are read, never the whole body: a
 * validation error about a parameter named `safety_tolerance` is not a policy refusal.
 */
export function isContentPolicyRejection(status: number, bodyText: string): boolean {
  if (status !== 400 && status !== 422) return false;
  let parsed: { error?: unknown; detail?: unknown } | null;
  try {
    parsed = JSON.parse(bodyText) as { error?: unknown; detail?: unknown } | null;
  } catch {
    return POLICY_WORDS.test(bodyText);
  }
  const error = parsed?.error ?? parsed?.detail;
  return Array.isArray(error) ? error.some(saysPolicy) : saysPolicy(error);
}

function saysPolicy(error: unknown): boolean {
  if (typeof error === 'string') return POLICY_WORDS.test(error);
  if (!error || typeof error !== 'object') return false;
  const { code, type, message, msg } = error as Record<string, unknown>;
  if (POLICY_CODES.has(String(code)) || POLICY_CODES.has(String(type))) return true;
  return [message, msg].some((m) => typeof m === 'string' && POLICY_WORDS.test(m));
}

export function errorForStatus(status: number, bodyText: string): DomainError {
  if (isContentPolicyRejection(status, bodyText)) return contentPolicyViolation();
  return upstreamError(undefined, new UpstreamHttpError(status, bodyText.slice(0, 1024)));
}

/** Wraps anything thrown while talking to the upstream; DomainErrors pass through unchanged. */
export function asUpstreamError(err: unknown, timedOut = false): DomainError {
  if (err instanceof DomainError) return err;
  return timedOut
    ? upstreamError('The model provider did not answer in time.', err)
    : upstreamError(undefined, err);
}
