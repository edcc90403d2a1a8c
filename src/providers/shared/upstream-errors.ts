/**
 * Turns what an upstream answered (a status and a body) into the one DomainError the caller
 * sees. The wire message is always one of ours: an upstream body can carry internals, echo a
 * (masked) key or a signed URL, so it only travels in `cause`, for the logs.
 */
import { contentPolicyViolation, DomainError, upstreamError } from '../../domain/errors/domain-error';
import { pathOf, Wording, words } from '../../domain/errors/field-path';

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

/** What must never reach a client from an upstream's words, and how to name the model instead. */
export interface ErrorScrub {
  /** The upstream's base URL and key: removed wherever they appear. */
  secrets: string[];
  /** The upstream's model id, and the public id a client knows it by. */
  model?: { upstream: string; public: string };
}

/** Statuses by which an upstream says the request itself was wrong: the client can fix it. */
const CLIENT_FAULT = new Set([400, 404, 413, 422]);
const MAX_MESSAGE_CHARS = 500;

function upstreamMessageOf(bodyText: string): { message?: string; param?: string; code?: string } {
  let parsed: { error?: unknown; detail?: unknown; message?: unknown } | null;
  try {
    parsed = JSON.parse(bodyText) as typeof parsed;
  } catch {
    return {};
  }
  const error = parsed?.error ?? parsed?.detail ?? parsed;
  if (typeof error === 'string') return { message: error };
  const first: unknown = Array.isArray(error) ? (error as unknown[])[0] : error;
  if (!first || typeof first !== 'object') return {};
  const { message, msg, param, loc, code } = first as Record<string, unknown>;
  const text = typeof message === 'string' ? message : typeof msg === 'string' ? msg : undefined;
  const where = typeof param === 'string' ? param : Array.isArray(loc) ? loc.filter((p) => p !== 'body').join('.') : undefined;
  return { message: text, param: where, code: typeof code === 'string' ? code : undefined };
}

/**
 * The upstream's own words, made safe to show: its URL, host, key, any other URL or bearer
 * token removed, its model id replaced by the public one, and the length bounded.
 */
export function scrubUpstreamText(text: string, scrub: ErrorScrub): string {
  let out = text;
  for (const secret of scrub.secrets) {
    if (secret.length >= 4) out = out.split(secret).join('[redacted]');
  }
  out = out
    .replace(/\bhttps?:\/\/[^\s'"<>]+/gi, '[url]')
    .replace(/\b(sk|pk|rk|key|fal|hf|gsk|xai)[-_][A-Za-z0-9_-]{8,}/g, '[redacted]')
    .replace(/\bBearer\s+\S+/gi, 'Bearer [redacted]');
  if (scrub.model && scrub.model.upstream !== scrub.model.public) {
    out = out.split(scrub.model.upstream).join(scrub.model.public);
  }
  return out.length > MAX_MESSAGE_CHARS ? `${out.slice(0, MAX_MESSAGE_CHARS)}…` : out;
}

/** The longest back-off passed on from an upstream: past it a client is better off trying again. */
const MAX_RETRY_AFTER_SECONDS = 60;

/** An upstream's Retry-After (delta-seconds or an HTTP date) as whole seconds from now, within 1–60; undefined when absent or unreadable. */
export function retryAfterSecondsOf(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  const seconds = /^\d{1,9}$/.test(text) ? Number(text) : (Date.parse(text) - now) / 1000;
  if (!Number.isFinite(seconds)) return undefined;
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(seconds)));
}

/**
 * Codes that speak of the caller's own key, balance or limits here: the provider's (our key at the
 * provider refused, its quota spent) must not reach a client as if they were, or an app would tell
 * its user to rotate a key or top up.
 */
const GATEWAY_CODES = new Set([
  'invalid_api_key',
  'insufficient_quota',
  'insufficient_credits',
  'rate_limit_exceeded',
  'daily_cap_exceeded',
  'budget_exceeded',
  'model_forbidden',
  'key_limit_reached',
  'permission_error',
  'authentication_error',
  'billing_hard_limit_reached',
  'account_deactivated',
  'idempotency_key_reused',
  'idempotency_key_in_use',
  'server_shutdown',
  'database_unavailable',
  'storage_unavailable',
  'service_unavailable',
  'internal_error',
]);

export function errorForStatus(status: number, bodyText: string, scrub?: ErrorScrub, retryAfter?: string): DomainError {
  if (isContentPolicyRejection(status, bodyText)) return contentPolicyViolation();
  const cause = new UpstreamHttpError(status, bodyText.slice(0, 1024));
  if (status === 429 || status === 503) {
    // Still the provider's failure (502, CONTRACT), but one that says when to come back: the
    // client is told so, and the SDKs' retries wait that long instead of hammering it.
    const retryAfterSeconds = retryAfterSecondsOf(retryAfter);
    const busy = status === 429 ? 'is limiting the rate of requests' : 'is temporarily unavailable';
    return new DomainError('upstream_error', `The model provider ${busy}; retry ${retryAfterSeconds ? `after ${retryAfterSeconds} s` : 'shortly'}.`, {
      code: status === 429 ? 'upstream_rate_limited' : 'upstream_unavailable',
      retryAfterSeconds,
      cause,
    });
  }
  if (scrub && CLIENT_FAULT.has(status)) {
    // The request was at fault (a schema the model rejects, a tool turn out of order, …): the
    // client gets a 4xx it can read and act on, and an SDK does not retry it.
    const { message, param, code } = upstreamMessageOf(bodyText);
    const text = scrubUpstreamText(message ?? 'The model provider rejected the request.', scrub);
    const safeParam = param && /^[\w.[\]-]{1,100}$/.test(param) ? param : null;
    // The provider's own code when it is a plain token (`context_length_exceeded`: agent
    // frameworks trim their history on it); one that could carry anything else (a name the
    // scrub would hide: the upstream's model, its key) is not passed on.
    const safeCode =
      code && /^[A-Za-z][\w.-]{0,63}$/.test(code) && scrubUpstreamText(code, scrub) === code && !GATEWAY_CODES.has(code) ? code : 'upstream_rejected';
    const type = status === 404 ? 'not_found_error' : 'invalid_request_error';
    // Where the provider's text writes the param it named, it names that field.
    const said = safeParam ? Wording.naming(text, safeParam) : Wording.plain(text);
    const path = safeParam ? pathOf(safeParam) : null;
    return new DomainError(type, words`The model provider rejected the request: ${said}`, { fieldPath: path, code: safeCode, cause });
  }
  return upstreamError(undefined, cause);
}

/** Wraps anything thrown while talking to the upstream; DomainErrors pass through unchanged. */
export function asUpstreamError(err: unknown, timedOut = false): DomainError {
  if (err instanceof DomainError) return err;
  return timedOut ? upstreamError('The model provider did not answer in time.', err) : upstreamError(undefined, err);
}
