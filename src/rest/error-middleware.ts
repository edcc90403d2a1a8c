import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { DomainError } from '../domain/errors/domain-error';
import type { Logger } from '../infra/observability/logger';

/** The OpenAI error body, the only error shape this service writes. */
export function sendError(res: Response, err: DomainError): void {
  if (err.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(err.retryAfterSeconds));
  for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  res.status(err.status).json({ error: { message: err.message, type: err.type, code: err.code, param: err.param } });
}

/** Errors raised by body parsing and other middleware, mapped to the domain's error types. */
export function toDomainError(err: unknown): DomainError | null {
  if (err instanceof DomainError) return err;
  const e = err as { type?: string; status?: number; code?: string; field?: string };
  if (e?.type === 'entity.too.large' || e?.code === 'LIMIT_FILE_SIZE' || e?.code === 'LIMIT_FIELD_VALUE')
    return new DomainError('request_too_large', 'The request body is larger than this endpoint accepts.');
  if (e?.type === 'entity.parse.failed') return new DomainError('invalid_request_error', 'The request body is not valid JSON.');
  if (e?.type === 'charset.unsupported' || e?.type === 'encoding.unsupported')
    return new DomainError('invalid_request_error', 'Unsupported body encoding.');
  if (typeof e?.code === 'string' && e.code.startsWith('LIMIT_'))
    return new DomainError('invalid_request_error', 'The multipart body breaks a limit of this endpoint.', { param: e.field ?? null });
  return null;
}

/** One error middleware: typed errors become their status; anything else is a 500 without internals. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const domain = toDomainError(err);
    if (res.headersSent) {
      logger.warn({ err: domain ?? err, path: req.path }, 'error after the response started');
      res.end();
      return;
    }
    if (domain) {
      if (domain.status >= 500) logger.warn({ type: domain.type, path: req.path, cause: String(domain.cause ?? '') }, domain.message);
      sendError(res, domain);
      return;
    }
    logger.error({ err, path: req.path }, 'unhandled error');
    sendError(res, new DomainError('internal_error', 'The server had an error while processing the request.'));
  };
}

export const notFoundHandler: RequestHandler = (req, res) => {
  sendError(res, new DomainError('not_found_error', `Unknown route ${req.method} ${req.path}.`, { code: 'route_not_found' }));
};
