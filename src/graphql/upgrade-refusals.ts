/**
 * Answers to a WebSocket upgrade the door refuses before any handshake: plain HTTP with the
 * OpenAI error body (the status from the one error table) and `Connection: close`, so a client
 * sees why rather than a dropped connection or `ws`'s text/html page.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { GRAPHQL_TRANSPORT_WS_PROTOCOL, handleProtocols } from 'graphql-ws';
import { DomainError } from '../domain/errors/domain-error';
import { asWritten } from '../domain/errors/field-path';
import { rawErrorAnswer } from '../infra/http/error-body';

/** 16 bytes in base64, as RFC 6455 §4.1 asks (`ws`'s own test). */
const KEY = /^[+/0-9A-Za-z]{22}==$/;

export function refuseUpgrade(socket: Duplex, err: DomainError): void {
  socket.end(rawErrorAnswer(err));
}

/** A WebSocket handshake that cannot succeed, in the door's words; null when `ws` may complete it. */
export function handshakeRefusal(req: IncomingMessage): DomainError | null {
  const key = req.headers['sec-websocket-key'];
  if (typeof key !== 'string' || !KEY.test(key)) {
    return badHandshake("A WebSocket upgrade needs a 'Sec-WebSocket-Key' header: 16 random bytes in base64.", 'Sec-WebSocket-Key');
  }
  // The versions `ws` speaks, read as it reads them: RFC 6455's 13, and draft 8.
  const version = Number(req.headers['sec-websocket-version']);
  if (version !== 13 && version !== 8) {
    // RFC 6455 §4.4: the versions this server speaks go back with the refusal.
    return badHandshake("A WebSocket upgrade needs 'Sec-WebSocket-Version: 13'.", 'Sec-WebSocket-Version', { 'Sec-WebSocket-Version': '13' });
  }
  // Offered subprotocols none of which is graphql-transport-ws (the legacy `graphql-ws` of
  // subscriptions-transport-ws, Apollo Client 2/3's WebSocketLink): the handshake completed with
  // no subprotocol, which such a client must abort, and it reconnected forever on a bare 1006
  // without ever reading why. A handshake that offers none is left to `ws` (the 4406 reaches it).
  // graphql-ws's own choice among the offered protocols, as the handshake would make it.
  const offered = req.headers['sec-websocket-protocol'];
  if (typeof offered === 'string' && handleProtocols(offered) === false) {
    return badHandshake(
      `The WebSocket subprotocol must be '${GRAPHQL_TRANSPORT_WS_PROTOCOL}' (the graphql-ws library's protocol); the legacy 'graphql-ws' protocol of subscriptions-transport-ws is not served.`,
      'Sec-WebSocket-Protocol',
    );
  }
  return null;
}

/** A refusal for what `ws` itself found wrong with the handshake (its message names the header). */
export function handshakeFailed(wsMessage: string): DomainError {
  return badHandshake(`The WebSocket handshake is invalid: ${wsMessage}.`, null);
}

/** `header` names the handshake header at fault, as HTTP writes it. */
function badHandshake(message: string, header: string | null, headers?: Record<string, string>): DomainError {
  return new DomainError('invalid_request_error', message, {
    fieldPath: header === null ? null : [asWritten(header)],
    code: 'invalid_websocket_handshake',
    headers,
  });
}
