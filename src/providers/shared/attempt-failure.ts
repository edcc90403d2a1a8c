/**
 * What a failed upstream call says about trying again (the upstream routes' retry rules): read
 * from the DomainError an adapter threw and its `cause` (an UpstreamHttpError for an answer, the
 * transport's own error otherwise). Every adapter throws through errorForStatus and
 * asUpstreamError, so this one reading serves them all.
 *
 * - retryable: a refused or reset connection, a timeout, an upstream 408, 429, 500, 502, 503 or
 *   504. Any other answer (a 4xx that is the client's fault, a content refusal) is passed on.
 * - surelyNotAccepted: the upstream cannot have taken the request: the connection was never
 *   made, or it answered with a refusal. A timeout or a connection cut after the request was
 *   sent may have been accepted (a video submission then stays with its route).
 */
import { DomainError } from '../../domain/errors/domain-error';
import { UpstreamHttpError } from './upstream-errors';

export interface AttemptFailure {
  retryable: boolean;
  surelyNotAccepted: boolean;
  /** The upstream's Retry-After, in seconds, when it sent one. */
  retryAfterSeconds?: number;
  /** For the log and /admin/upstreams: an HTTP status or a transport code, never a body. */
  summary: string;
}

const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);
/** The connection was never made: nothing reached the upstream. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);
/** The connection broke or went quiet: the request may have reached the upstream. */
const CUT = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

function transportCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NOT_CONNECTED.has(code) || CUT.has(code))) return code;
    if ((e as { name?: unknown }).name === 'TimeoutError') return 'timeout';
  }
  return undefined;
}

export function classifyAttemptFailure(err: unknown): AttemptFailure {
  const cause = err instanceof DomainError ? err.cause : err;
  if (cause instanceof UpstreamHttpError) {
    const retryAfterSeconds = err instanceof DomainError ? err.retryAfterSeconds : undefined;
    return { retryable: RETRYABLE_STATUS.has(cause.status), surelyNotAccepted: true, retryAfterSeconds, summary: `HTTP ${cause.status}` };
  }
  if (err instanceof DomainError && err.type !== 'upstream_error') {
    // A content refusal, a request the upstream rejected as the client's fault: its answer stands.
    return { retryable: false, surelyNotAccepted: true, summary: err.code ?? err.type };
  }
  const code = transportCode(cause);
  if (code && NOT_CONNECTED.has(code)) return { retryable: true, surelyNotAccepted: true, summary: code };
  if (code) return { retryable: true, surelyNotAccepted: false, summary: code };
  // An answer we could not read (not JSON, too large): the upstream did answer, and may have done the work.
  return { retryable: false, surelyNotAccepted: false, summary: 'unreadable answer' };
}
