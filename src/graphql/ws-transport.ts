/**
 * graphql-ws's protocol on `ws` sockets: graphql-ws's `makeServer` with our own socket adapter, in
 * place of its `useServer` starter (which its docs invite copying), for what that starter gets
 * wrong with hostile clients. It printed with console.error, stack and all, and answered 4500
 * ("internal error") to things that are the client's fault:
 *
 * - an 'error' event on a socket: `ws` emits it only when the client broke the WebSocket
 *   protocol (a frame past maxPayload, invalid UTF-8, a bad opcode or close code), after it has
 *   already closed the socket with the matching code (1009, 1007, 1002). Here it is one debug
 *   line, no stack, and the close code stays `ws`'s.
 * - a well-formed message of a type only a server sends (`next`, `error`, `connection_ack`):
 *   graphql-ws throws from its handler. Here it is 4400, as graphql-ws closes for any other
 *   invalid message, and a debug line.
 * - a message handled while the client was leaving (an answer sent to a closed socket).
 *
 * Anything else a handler throws is ours: one structured error line and 4500. The keep-alive
 * pings and the disposal are the starter's.
 */
import type { IncomingMessage } from 'node:http';
import { CloseCode, handleProtocols, makeServer, type ConnectionInitMessage, type Disposable, type ServerOptions } from 'graphql-ws';
import type { Extra } from 'graphql-ws/use/ws';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import type { Logger } from '../infra/observability/logger';

/** A frame's text: ws hands over a Buffer, an ArrayBuffer or the fragments of one message. */
const rawText = (data: RawData): string => (Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString('utf8');

/** Message types graphql-ws validates but only a server may send. */
const SERVER_ONLY = new Set(['next', 'error', 'connection_ack']);

/** The type of a message that is one of SERVER_ONLY, read again only once its handler has failed. */
function serverOnlyType(data: RawData): string | null {
  try {
    const type = (JSON.parse(rawText(data)) as { type?: unknown } | null)?.type;
    return typeof type === 'string' && SERVER_ONLY.has(type) ? type : null;
  } catch {
    return null;
  }
}

export function serveGraphQLWs<P extends ConnectionInitMessage['payload'], E extends Record<PropertyKey, unknown>>(
  wss: WebSocketServer,
  options: ServerOptions<P, Extra & Partial<E>>,
  logger: Logger,
  keepAliveMs = 12_000,
): Disposable {
  const server = makeServer(options);
  wss.options.handleProtocols = handleProtocols;
  // With noServer the server itself emits no 'error'; should it ever, it is ours, logged once.
  wss.on('error', (err) => logger.error({ err }, 'GraphQL WebSocket server error'));

  const failed = (socket: WebSocket, data: RawData, err: unknown) => {
    if (socket.readyState !== socket.OPEN) {
      return logger.debug({ reason: err instanceof Error ? err.message : String(err) }, 'GraphQL WebSocket: a message was not answered, the client had gone');
    }
    const type = serverOnlyType(data);
    if (type) {
      logger.debug({ type }, 'GraphQL WebSocket closed: the client sent a message only a server sends');
      return socket.close(CloseCode.BadRequest, `Invalid message received: a client does not send "${type}"`);
    }
    logger.error({ err }, 'GraphQL WebSocket message handling failed');
    socket.close(CloseCode.InternalServerError, 'Internal server error');
  };

  wss.on('connection', (socket: WebSocket, request: IncomingMessage) => {
    // `ws` has already closed the socket with the code the violation calls for.
    socket.on('error', (err: Error & { code?: string }) => {
      logger.debug({ code: err.code, reason: err.message }, 'GraphQL WebSocket closed: the client broke the WebSocket protocol');
    });

    let pongWait: NodeJS.Timeout | null = null;
    const pingInterval =
      keepAliveMs > 0 && Number.isFinite(keepAliveMs)
        ? setInterval(() => {
            if (socket.readyState !== socket.OPEN) return;
            pongWait = setTimeout(() => socket.terminate(), keepAliveMs);
            socket.once('pong', () => {
              if (pongWait) clearTimeout(pongWait);
              pongWait = null;
            });
            socket.ping();
          }, keepAliveMs)
        : null;

    const closed = server.opened(
      {
        protocol: socket.protocol,
        send: (data) =>
          new Promise<void>((resolve, reject) => {
            if (socket.readyState !== socket.OPEN) return resolve();
            socket.send(data, (err) => (err ? reject(err) : resolve()));
          }),
        close: (code, reason) => socket.close(code, reason),
        // The listener's promise settles when the message is handled (message-turns.ts waits on it).
        // The listener's promise settles when the message is handled: message-turns.ts calls the
        // listeners itself and waits on what they return (so an async listener is the point here).
        onMessage: (cb) =>
          // eslint-disable-next-line @typescript-eslint/no-misused-promises
          socket.on('message', async (data: RawData) => {
            try {
              await cb(rawText(data));
            } catch (err) {
              failed(socket, data, err);
            }
          }),
      },
      { socket, request } as Extra & Partial<E>,
    );

    socket.once('close', (code: number, reason: Buffer) => {
      if (pongWait) clearTimeout(pongWait);
      if (pingInterval) clearInterval(pingInterval);
      closed(code, String(reason)).catch((err: unknown) => logger.error({ err }, 'GraphQL WebSocket close handling failed'));
    });
  });

  return {
    dispose: async () => {
      for (const client of wss.clients) client.close(1001, 'Going away');
      wss.removeAllListeners();
      await new Promise<void>((resolve, reject) => wss.close((err) => (err ? reject(err) : resolve())));
    },
  };
}
