import type { ServerResponse } from 'node:http';
import type { RequestHandler, Response } from 'express';
import { IDEMPOTENCY_HEADER, IdempotencyService, type IdempotentCall, type StoredResponse } from '../domain/idempotency/idempotency-service';
import { singleHeader } from '../infra/http/bearer-token';
import type { Logger } from '../infra/observability/logger';
import { keyOf } from './auth';
import { multipartTextField, readAndReplayBody, withoutBoundary } from './raw-body';
import { MAX_MULTIPART_BODY_BYTES } from './upload-cap';
import { clientGone, forgetAbandonedAnswer, onAbandonedAnswer } from './abandoned-answer';
import { errorBody } from '../infra/http/error-body';
import { callLogOf } from './call-logs';

/** The billable POSTs (relative to /v1) that honour an Idempotency-Key. */
export const IDEMPOTENT_PATHS = new Set([
  '/chat/completions',
  '/responses',
  '/images/generations',
  '/images/edits',
  '/video/queue',
  '/video/motion-control',
  '/videos',
]);

/**
 * Response headers that belong to the connection, not to the answer; and `x-request-id`: a
 * replay is a request of its own, answered (and logged) under its own id.
 */
const NOT_REPLAYED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date', 'retry-after', 'x-request-id']);

/**
 * Idempotency-Key for the billable /v1 POSTs, wrapped around the handlers from outside: the
 * first request with a key runs and its response is captured at `res.end` and stored before it
 * is sent; a retry with the same key and body gets that response again with
 * `Idempotent-Replayed: true`, without reaching the handler (so nothing is charged again).
 * Mounted on each billable route: on the multipart ones (image edits, a video create) after
 * their size check (and an edit's rate limit), on the JSON ones after their parser. A streamed
 * request (`stream: true`: chat, Responses, images; an edit's multipart `stream` part `true`) is
 * not replayable and ignores the header.
 */
export function idempotencyMiddleware(service: IdempotencyService, logger: Logger, chain: 'raw' | 'json'): RequestHandler {
  return async (req, res, next) => {
    const raw = singleHeader(req, IDEMPOTENCY_HEADER);
    if (raw === undefined || req.method !== 'POST' || !IDEMPOTENT_PATHS.has(req.path) || res.locals.idempotency) return next();
    const multipart = req.is('multipart/form-data') === 'multipart/form-data';
    if (multipart !== (chain === 'raw')) return next();
    const key = IdempotencyService.parseKey(raw)!;
    const apiKeyId = keyOf(res).keyId;
    let fingerprint: string;
    if (multipart) {
      const body = await readAndReplayBody(req, MAX_MULTIPART_BODY_BYTES);
      if (multipartTextField(body, req.get('content-type'), 'stream') === 'true') return next();
      fingerprint = IdempotencyService.fingerprint('POST', req.path, withoutBoundary(body, req.get('content-type')));
    } else {
      if ((req.body as { stream?: unknown } | undefined)?.stream === true) return next();
      fingerprint = IdempotencyService.fingerprint('POST', req.path, req.body);
    }
    // A client that left before its request was read to here (authentication waited on a
    // stalled database, say) takes no claim and runs nothing: its retry runs instead.
    if (res.destroyed) return next(clientGone());
    res.locals.idempotency = key;
    const start = await service.start(apiKeyId, key, fingerprint);
    if (start.kind === 'replay') return replay(res, start.response);
    res.locals.idempotentCall = start.call;
    const store = (response: StoredResponse) =>
      service
        .complete(apiKeyId, key, response)
        .catch((err) => logger.warn({ err: String(err) }, 'could not store an idempotent response; it is tried again until the database takes it'));
    captureEnd(res, store);
    // A failure whose client had already left is never written: the claim learns it all the same.
    onAbandonedAnswer(
      res,
      (err) =>
        void store({ status: err.status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(JSON.stringify(errorBody(err))) }),
    );
    // A client that hangs up does not free the key: the handler still runs (and may charge) and
    // its response is stored for the retry. Only a process that dies leaves the key claimed, until
    // its heartbeats have been missing for the lease grace.
    next();
  };
}

/** The call the request's Idempotency-Key claim names (see IdempotentCall), for the handler to give its service. */
export function callOf(res: ServerResponse): IdempotentCall | undefined {
  return (res as Partial<Response>).locals?.idempotentCall as IdempotentCall | undefined;
}

function replay(res: Response, stored: StoredResponse): void {
  // A replayed refusal is logged as the refusal it was; a replay is charged nothing.
  if (stored.status >= 400) {
    const error = errorOfBody(stored.body);
    if (error) callLogOf(res)?.failedAs(error.type, error.code);
  }
  res.status(stored.status);
  // Filtered here too, whatever the stored headers hold.
  for (const [name, value] of Object.entries(stored.headers)) if (!NOT_REPLAYED.has(name.toLowerCase())) res.setHeader(name, value);
  res.set('Idempotent-Replayed', 'true');
  res.end(stored.body);
}

/** Calls `store` with the complete response before the final `end` goes out. */
function captureEnd(res: Response, store: (r: StoredResponse) => Promise<unknown>): void {
  const chunks: Buffer[] = [];
  const toBuffer = (c: unknown, enc?: unknown) => (Buffer.isBuffer(c) ? c : Buffer.from(String(c), typeof enc === 'string' ? (enc as BufferEncoding) : 'utf8'));
  const write = res.write.bind(res) as (...a: unknown[]) => boolean;
  const end = res.end.bind(res) as (...a: unknown[]) => Response;
  const writeHead = res.writeHead.bind(res) as (...a: unknown[]) => Response;
  // Headers given to writeHead are not kept where getHeaders() reads them: set them one by one.
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const headers = rest.find((a) => typeof a === 'object' && a !== null) as Record<string, string | string[]> | undefined;
    if (headers) for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    return writeHead(status, ...rest.filter((a) => typeof a === 'string'));
  }) as Response['writeHead'];
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk, rest[0]));
    return write(chunk, ...rest);
  }) as Response['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    forgetAbandonedAnswer(res);
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') chunks.push(toBuffer(chunk, rest[0]));
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(res.getHeaders())) {
      if (value !== undefined && !NOT_REPLAYED.has(name)) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    }
    void store({ status: res.statusCode, headers, body: Buffer.concat(chunks) }).finally(() => end(chunk, ...rest));
    return res;
  }) as Response['end'];
}

/** The error type and code of a stored error body, if it is one. */
function errorOfBody(body: Buffer): { type: string; code: string | null } | null {
  try {
    const error = (JSON.parse(body.toString('utf8')) as { error?: { type?: unknown; code?: unknown } }).error;
    if (typeof error?.type !== 'string') return null;
    return { type: error.type, code: typeof error.code === 'string' ? error.code : null };
  } catch {
    return null;
  }
}
