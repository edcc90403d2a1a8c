import { STATUS_CODES } from 'node:http';
import type { DomainError } from '../../domain/errors/domain-error';

/**
 * The OpenAI error body, the only error shape this service writes over HTTP: REST's answers and
 * SSE error events, a refused WebSocket upgrade, a request not received in time.
 */
export function errorBody(err: DomainError) {
  return { error: { message: err.message, type: err.type, code: err.code, param: err.param } };
}

/**
 * A whole HTTP/1.1 error answer for a raw socket, where no ServerResponse exists (a refused
 * WebSocket upgrade, a client error node's parser raised): the error body, its `Retry-After` and
 * headers, and `Connection: close`. `status` is the error's own unless the caller knows HTTP's
 * better one (408 for a request not received in time).
 */
export function rawErrorAnswer(err: DomainError, extraHeaders: Record<string, string> = {}, status: number = err.status): string {
  const body = JSON.stringify(errorBody(err));
  const headers: Record<string, string> = {
    Connection: 'close',
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    ...(err.retryAfterSeconds === undefined ? {} : { 'Retry-After': String(err.retryAfterSeconds) }),
    ...err.headers,
    ...extraHeaders,
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n${lines.join('')}\r\n${body}`;
}
