import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DomainError, causeText } from '../domain/errors/domain-error';
import type { Logger } from '../infra/observability/logger';
import { sendJson } from './json-response';
import { REQUEST_ID_HEADER } from '../infra/http/request-id';
import { errorBody } from '../infra/http/error-body';
import { answerAbandoned } from './abandoned-answer';
import { callLogOf } from './call-logs';

/** Writes a failure (on node:http, so both the Express app and the JSON lane use it). */
export function sendError(res: ServerResponse, err: DomainError): void {
  const headers = err.retryAfterSeconds === undefined ? err.headers : { ...err.headers, 'Retry-After': String(err.retryAfterSeconds) };
  sendJson(res, err.status, headers, errorBody(err));
}

/**
 * A request body past its endpoint's limit (body-parser's, the JSON lane's, a replayed multipart
 * body's; with `maxBytes`, the multipart cap on all of a body's parts together).
 */
export function bodyTooLarge(maxBytes?: number): DomainError {
  const all = maxBytes === undefined ? '' : ` (${maxBytes / (1024 * 1024)} MB in all)`;
  return new DomainError('request_too_large', `The request body is larger than this endpoint accepts${all}.`);
}

/**
 * A body under a Content-Type the route does not read (or none): refused, so the route never runs
 * on its defaults with the body unread. `expected` is how the route wants it sent.
 */
export function unsupportedContentType(expected: string): DomainError {
  return new DomainError('invalid_request_error', `The request body must be ${expected}.`, { code: 'unsupported_content_type' });
}

/**
 * A JSON body labelled with a charset other than UTF-8 (`utf8` spelt so, us-ascii, iso-8859-1,
 * utf-16): JSON on the wire is UTF-8 (RFC 8259), so it is the 400 `invalid_encoding` a body of
 * bad bytes gets. body-parser answered some with a codeless "Unsupported body encoding." and
 * decoded UTF-16 into something else.
 */
export function charsetNotUtf8(): DomainError {
  return new DomainError('invalid_request_error', 'The request body must be UTF-8, sent as charset=utf-8 or with no charset.', { code: 'invalid_encoding' });
}

/** A JSON body that does not parse. */
export function bodyNotJson(): DomainError {
  return new DomainError('invalid_request_error', 'The request body is not valid JSON.');
}

/** What each of multer's limits means to the client (the field it names is the error's path). */
const MULTIPART_LIMITS: Record<string, (field?: string) => string> = {
  // Also what multer says of a field past its maxCount (a 17th image).
  LIMIT_UNEXPECTED_FILE: (field) =>
    `Unexpected file field '${(field ?? '').slice(0, 64)}': images go in 'image' (or 'image[]'), at most 16, and at most one 'mask'.`,
  LIMIT_FILE_COUNT: () => 'The multipart body has more files than this endpoint accepts: at most 16 images and one mask.',
  LIMIT_FIELD_COUNT: () => 'The multipart body has more text fields than this endpoint accepts.',
  LIMIT_PART_COUNT: () => 'The multipart body has more parts than this endpoint accepts.',
  LIMIT_FIELD_KEY: () => 'A multipart field name is longer than this endpoint accepts.',
};

/** A multipart body busboy could not read: no boundary, a malformed part header, an early end. */
export function multipartMalformed(): DomainError {
  return new DomainError(
    'invalid_request_error',
    "The multipart body could not be parsed: check the Content-Type's boundary, each part's headers, and the closing boundary.",
  );
}

/** Errors raised by body parsing and other middleware, mapped to the domain's error types. */
export function toDomainError(err: unknown): DomainError | null {
  if (err instanceof DomainError) return err;
  const e = err as { type?: string; status?: number; expose?: boolean; code?: string; field?: string };
  if (e?.type === 'entity.too.large' || e?.code === 'LIMIT_FILE_SIZE' || e?.code === 'LIMIT_FIELD_VALUE') return bodyTooLarge();
  if (e?.type === 'entity.parse.failed') return bodyNotJson();
  if (e?.type === 'charset.unsupported') return charsetNotUtf8();
  if (e?.type === 'encoding.unsupported')
    return new DomainError('invalid_request_error', 'Unsupported Content-Encoding: send the body as it is, or gzip, deflate or br.', {
      code: 'unsupported_content_encoding',
    });
  if (typeof e?.code === 'string' && e.code.startsWith('LIMIT_')) {
    const message = MULTIPART_LIMITS[e.code]?.(e.field) ?? 'The multipart body breaks a limit of this endpoint.';
    // Too many files are too many images: the field a client fixes.
    const field = e.field ?? (e.code === 'LIMIT_FILE_COUNT' ? 'image' : null);
    return new DomainError('invalid_request_error', message, { fieldPath: field === null ? null : [field] });
  }
  // zlib's refusal of a body that is not what its Content-Encoding says (body-parser passes it on
  // as a 400): Z_… from gzip and deflate, ERR__ERROR_… from brotli. Both get the same code, so a
  // client can tell a bad encoding from a body that could not be read.
  if (typeof e?.code === 'string' && (e.code.startsWith('Z_') || e.code.startsWith('ERR__ERROR_')))
    return new DomainError('invalid_request_error', 'The request body could not be decoded as its Content-Encoding says.', {
      code: 'invalid_content_encoding',
    });
  // Any other client error body-parser raises (an aborted or mis-sized body): its status says it is the client's.
  if (e?.expose === true && typeof e.status === 'number' && e.status >= 400 && e.status < 500)
    return new DomainError('invalid_request_error', 'The request body could not be read.');
  return null;
}

/** node's error for a request whose client hung up mid-body (what raw-body, multer and our replay reader pass on). */
function clientWentAway(err: unknown, res: ServerResponse): boolean {
  const e = err as { code?: string; message?: string };
  return res.destroyed || (e?.code === 'ECONNRESET' && e.message === 'aborted');
}

/** Typed errors become their status; anything else is a 500 without internals. The one place a failed request is answered. */
export function answerFailure(logger: Logger, err: unknown, req: IncomingMessage, res: ServerResponse): void {
  const domain = toDomainError(err);
  const path = ((req as { originalUrl?: string }).originalUrl ?? req.url ?? '').split('?', 1)[0];
  const requestId = res.getHeader(REQUEST_ID_HEADER);
  if (clientWentAway(err, res)) {
    // The request log says the client closed (the response's close does): not this error.
    // Nobody is left to answer. The client's leaving is not our failure (an upstream call its
    // abort cut short ends as an upstream_error): a note, not a warning or an error with a stack.
    logger.info({ path, requestId, type: domain?.type }, 'the client closed the connection before its answer');
    // What the request's Idempotency-Key claim must still learn: a 5xx (an aborted call) frees it.
    if (!res.headersSent) answerAbandoned(res, domain ?? internalError());
    if (!res.destroyed) res.destroy();
    return;
  }
  callLogOf(res)?.failed(domain ?? err);
  if (res.headersSent) {
    logger.warn({ err: domain ?? err, path, requestId }, 'error after the response started');
    res.end();
    return;
  }
  if (domain) {
    if (domain.status >= 500) logger.warn({ type: domain.type, path, requestId, cause: causeText(domain.cause) }, domain.message);
    sendError(res, domain);
    return;
  }
  logger.error({ err, path, requestId }, 'unhandled error');
  sendError(res, internalError());
}

function internalError(): DomainError {
  return new DomainError('internal_error', 'The server had an error while processing the request.');
}

/** The Express end of the one error path. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => answerFailure(logger, err, req, res);
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(res, new DomainError('not_found_error', `Unknown route ${req.method} ${req.path}.`, { code: 'route_not_found' }));
};
