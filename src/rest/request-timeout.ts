/**
 * The answer to a request not received within REQUEST_RECEIVE_SECONDS (node's `requestTimeout`,
 * and `headersTimeout` for headers that never finish). node writes it itself, on the raw socket,
 * as a bare `408` without a body; here it is a 408 carrying the API's error body, and the
 * connection is closed as node closes it.
 *
 * A 'clientError' listener replaces node's answer to every client error, so the others (a request
 * node cannot parse, headers too large, …) are answered with node's statuses, in the same shape.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from '../domain/errors/domain-error';
import { randomIdText } from '../domain/shared/ids';
import { REQUEST_ID_HEADER } from '../infra/http/request-id';
import { rawErrorAnswer } from '../infra/http/error-body';
import { bodyTooLarge } from './error-middleware';

export function requestNotReceivedInTime(seconds: number): DomainError {
  return new DomainError('invalid_request_error', `The request was not received in time: all of it, headers and body, must arrive within ${seconds} seconds.`, {
    code: 'request_timeout',
  });
}

/** A client error's answer: node's status for it, in the API's error shape. */
interface ClientErrorAnswer {
  status: number;
  error: () => DomainError;
}

/** node's statuses for the client errors it names (lib/_http_server.js, socketOnError); 400 for the rest. */
const CLIENT_ERROR_ANSWERS: Record<string, ClientErrorAnswer> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    error: () => new DomainError('invalid_request_error', 'The request headers are too large.', { code: 'request_headers_too_large' }),
  },
  // As every other body over its bound (error-middleware.ts).
  HPE_CHUNK_EXTENSIONS_OVERFLOW: { status: 413, error: () => bodyTooLarge() },
};

const MALFORMED_REQUEST: ClientErrorAnswer = {
  status: 400,
  error: () =>
    new DomainError(
      'invalid_request_error',
      'The request is not valid HTTP/1.1 (a malformed request line, header, or chunked body; or bytes past the declared Content-Length).',
      {
        code: 'malformed_request',
      },
    ),
};

export function answerRequestTimeouts(server: Server, receiveSeconds: number): void {
  // The exchange in flight on each connection: its request id goes into the answer, one whose
  // response has started must not get a second status line in the middle of its bytes, and one
  // whose request was read whole is answered before the connection goes (below).
  const current = new WeakMap<Duplex, { req: IncomingMessage; res: ServerResponse }>();
  server.on('request', (req, res) => current.set(req.socket, { req, res }));
  // A parser that failed fails again on the bytes that follow: one answer per connection.
  const answered = new WeakSet<Duplex>();

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    const exchange = current.get(socket);
    const res = exchange?.res;
    // Bytes past a request that was read whole (more than its Content-Length, a body sent
    // without one): that request is running and may have done its work (a job queued and
    // charged). Its client gets its answer, then the connection closes; the stray bytes get
    // none, as node would have cut the answer off with a bare 400 written first.
    if (res && exchange.req.complete && !res.writableFinished && !res.destroyed) {
      if (!res.headersSent) res.shouldKeepAlive = false;
      const close = () => socket.destroy();
      res.once('finish', () => setImmediate(close));
      res.once('close', close);
      return;
    }
    const started = res !== undefined && res.headersSent && !res.writableFinished;
    if (socket.writable && !started) {
      const requestId = (res?.getHeader(REQUEST_ID_HEADER) as string | undefined) ?? `req_${randomIdText(12)}`;
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        // 408, not the 400 the error type has elsewhere: HTTP's status for this, which clients
        // and proxies know, and node's own. Nothing of the request was read: no route, no table.
        socket.write(rawErrorAnswer(requestNotReceivedInTime(receiveSeconds), { [REQUEST_ID_HEADER]: requestId }, 408));
      } else {
        const answer = CLIENT_ERROR_ANSWERS[err.code ?? ''] ?? MALFORMED_REQUEST;
        socket.write(rawErrorAnswer(answer.error(), { [REQUEST_ID_HEADER]: requestId }, answer.status));
      }
    }
    // As node: the connection goes; what was written has already left for the kernel.
    socket.destroy(err);
  });
}
