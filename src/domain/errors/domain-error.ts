/**
 * Typed domain errors. Domain code throws these; the REST error middleware and the GraphQL
 * formatError are the only two places that turn them into wire errors, both through
 * `statusFor` (one table) so a type always has the same HTTP status and GraphQL code. A refusal
 * names its field by a path, and each door writes it (in `param` and in the message) in its own
 * spelling (field-path.ts).
 */
import { domainSpelling, FIELD, spellPath, Wording, words, type FieldPath, type Spelling } from './field-path';

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'permission_denied'
  | 'insufficient_credits'
  | 'model_forbidden'
  | 'not_found_error'
  | 'key_limit_reached'
  | 'idempotency_error'
  | 'video_not_cancellable'
  | 'video_not_deletable'
  | 'request_too_large'
  | 'content_policy_violation'
  | 'rate_limit_exceeded'
  | 'daily_cap_exceeded'
  | 'budget_exceeded'
  | 'upstream_error'
  | 'service_unavailable'
  | 'internal_error';

const STATUS_BY_TYPE: Record<ErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  insufficient_credits: 402,
  model_forbidden: 403,
  permission_error: 403,
  permission_denied: 403,
  not_found_error: 404,
  key_limit_reached: 409,
  idempotency_error: 409,
  video_not_cancellable: 409,
  video_not_deletable: 409,
  request_too_large: 413,
  content_policy_violation: 422,
  rate_limit_exceeded: 429,
  daily_cap_exceeded: 429,
  budget_exceeded: 429,
  internal_error: 500,
  upstream_error: 502,
  service_unavailable: 503,
};

/** What an error's cause says, for a log line (an Error's name and message, else its JSON). */
export function causeText(cause: unknown): string {
  if (cause === undefined || cause === null) return '';
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  return typeof cause === 'string' ? cause : (JSON.stringify(cause) ?? '');
}

export function statusFor(type: ErrorType): number {
  return STATUS_BY_TYPE[type];
}

export interface DomainErrorOptions {
  code?: string | null;
  /**
   * The refused field (or a name that is not a field, `asWritten`); an empty path names none. Not
   * `path`: graphql-js takes an error with an array `path` for one it has already located.
   */
  fieldPath?: FieldPath | null;
  /** Seconds a client should wait before retrying (429, 503). */
  retryAfterSeconds?: number;
  /** Extra response headers, e.g. the x-ratelimit-* family. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly code: string | null;
  readonly fieldPath: FieldPath | null;
  readonly wording: Wording;
  readonly retryAfterSeconds?: number;
  readonly headers: Record<string, string>;

  /** `message` is `message` as REST writes it (and logs read it): the field named in the domain's spelling. */
  constructor(
    readonly type: ErrorType,
    message: string | Wording,
    options: DomainErrorOptions = {},
  ) {
    const wording = typeof message === 'string' ? Wording.plain(message) : message;
    const path = options.fieldPath?.length ? options.fieldPath : null;
    super(wording.for(path ? spellPath(path) : ''), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.wording = wording;
    this.fieldPath = path;
    this.code = options.code ?? null;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return statusFor(this.type);
  }

  /** The refused field as REST names it (`reference_image_urls[1]`), or null. */
  get param(): string | null {
    return this.paramFor(domainSpelling);
  }

  /** The refused field with its keys spelled by `spell`, or null. */
  paramFor(spell: Spelling): string | null {
    return this.fieldPath ? spellPath(this.fieldPath, spell) : null;
  }

  /** The message naming the field with its keys spelled by `spell`. */
  messageFor(spell: Spelling): string {
    return this.wording.for(this.paramFor(spell) ?? '');
  }
}

export const invalidRequest = (message: string | Wording, path: FieldPath | null = null, code: string | null = null) =>
  new DomainError('invalid_request_error', message, { fieldPath: path, code });

/** The house refusal of one field's value: `Invalid '<field>': <reason>`. */
export const invalidField = (path: FieldPath, reason: string | Wording, code: string | null = null) =>
  invalidRequest(words`Invalid '${FIELD}': ${typeof reason === 'string' ? Wording.plain(reason) : reason}`, path, code);

export const unauthenticated = (message = 'Invalid or missing credentials.') => new DomainError('authentication_error', message, { code: 'invalid_api_key' });

/** A key whose `expiresAt` has passed, authenticated with a secret of its own: its caller learns why. */
export const apiKeyExpired = () =>
  new DomainError('authentication_error', 'This API key has expired; its owner may give it a later expiresAt or create another key.', {
    code: 'api_key_expired',
  });

/** A credential that is known and valid but is not an operator's, on an operator operation. */
export const permissionDenied = (message = 'This operation is for operators: an ADMIN_TOKEN, or an ID token whose subject is in ADMIN_SUBJECTS.') =>
  new DomainError('permission_denied', message, { code: 'permission_denied' });

export const notFound = (message: string | Wording, code: string | null = null, path: FieldPath | null = null) =>
  new DomainError('not_found_error', message, { code, fieldPath: path });

export const modelNotFound = (model: string, path: FieldPath = ['model'], message = `The model '${model}' does not exist.`) =>
  new DomainError('not_found_error', message, { code: 'model_not_found', fieldPath: path });

export const modelForbidden = (model: string) => new DomainError('model_forbidden', `This API key may not use the model '${model}'.`, { fieldPath: ['model'] });

export const insufficientCredits = (message = 'Your credit balance does not cover this request.') => new DomainError('insufficient_credits', message);

export const contentPolicyViolation = (message = 'The prompt was rejected by the model provider on content-policy grounds.') =>
  new DomainError('content_policy_violation', message, { fieldPath: ['prompt'] });

/**
 * The database did not answer in time (stalled, partitioned: no error comes, only silence). The
 * same answer the infrastructure gives when it cannot reach the database at all.
 */
export const databaseTooSlow = () =>
  new DomainError('service_unavailable', 'The service is temporarily unavailable; retry shortly.', { code: 'database_unavailable', retryAfterSeconds: 5 });

/** The model provider failed. The message shown to the caller never carries upstream internals. */
export const upstreamError = (message = 'The model provider failed to answer.', cause?: unknown) => new DomainError('upstream_error', message, { cause });
