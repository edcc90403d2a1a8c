/**
 * The answer to a request not received within REQUEST_RECEIVE_SECONDS (node's `requestTimeout`,
 * and `headersTimeout` for headers that never finish). node writes it itself, on the raw socket,
 * as a bare `408` without a body; here it is a 408 carrying the API's error body, and the
 * connection is closed as node closes it.
 *
 * A 'clientError' listener replaces node's answer to every client error, so the others (a request
 * node cannot parse, headers too large, …) are answered as node answers them.
 */
import type { Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { DomainError } from '../domain/errors/domain-error';
import { randomIdText } from '../domain/shared/ids';
import { REQUEST_ID_HEADER } from '../infra/http/request-id';
import { errorBody } from '../infra/http/error-body';

export function requestNotReceivedInTime(seconds: number): DomainError {
  return new DomainError(
    'invalid_request_error',
    `The request was not received in time: all of it, headers and body, must arrive within ${seconds} seconds.`,
    { code: 'request_timeout' },
  );
}

/** node's own answers to the other client errors (lib/_http_server.js, socketOnError). */
const NODE_ANSWERS: Record<string, string> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
};

export function answerRequestTimeouts(server: Server, receiveSeconds: number): void {
  // The response in flight on each connection: its request id goes into the 408, and one that
  // has started must not get a second status line in the middle of its bytes.
  const current = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (req, res) => current.set(req.socket, res));

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const res = current.get(socket);
    const started = res !== undefined && res.headersSent && !res.writableFinished;
    if (socket.writable && !started) {
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        // 408, not the 400 the error type has elsewhere: HTTP's status for this, which clients
        // and proxies know, and node's own. Nothing of the request was read: no route, no table.
        const requestId = (res?.getHeader(REQUEST_ID_HEADER) as string | undefined) ?? `req_${randomIdText(12)}`;
        const body = JSON.stringify(errorBody(requestNotReceivedInTime(receiveSeconds)));
        socket.write(
          'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n' +
            `Content-Length: ${Buffer.byteLength(body)}\r\n${REQUEST_ID_HEADER}: ${requestId}\r\n\r\n${body}`,
        );
      } else {
        socket.write(`HTTP/1.1 ${NODE_ANSWERS[err.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
      }
    }
    // As node: the connection goes; what was written has already left for the kernel.
    socket.destroy(err);
  });
}
