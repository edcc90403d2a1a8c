/**
 * Which requests that ask for an upgrade the WebSocket door takes, and how the others are served.
 *
 * Node's HTTP server hands every request with `Connection: Upgrade` to its 'upgrade' listeners
 * once there is one, with the request's parser already torn down: the request never reaches
 * the app. curl --http2 on http:// (`Upgrade: h2c`), Java's HTTP clients and some proxies send
 * such requests to any path, and they got an empty reply. The door takes only a WebSocket
 * upgrade to /graphql (a GET: RFC 6455 §4.1); anything else is served by the app as ordinary
 * HTTP/1.1, the upgrade ignored, as a server that does not speak the protocol does (RFC 9110
 * §7.8), and the connection closed after the answer.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Whether the request is a WebSocket upgrade to `path` (a failed handshake is answered by the door). */
export function isWebSocketUpgradeTo(req: IncomingMessage, path: string): boolean {
  if (req.method !== 'GET') return false;
  const upgrade = req.headers.upgrade;
  if (typeof upgrade !== 'string' || !upgrade.split(',').some((p) => p.trim().toLowerCase() === 'websocket')) return false;
  return new URL(req.url ?? '/', 'http://localhost').pathname === path;
}

type Narrowable = Server & { shouldUpgradeCallback?: (req: IncomingMessage) => boolean };

/**
 * Node 22.21+ and 24.9+ ask `server.shouldUpgradeCallback` whether to treat a request as an
 * upgrade (by default: whether anyone listens to 'upgrade'); a request it declines goes to the
 * app as any other, its body parsed by node. There the door's predicate is set, and the
 * 'upgrade' listener sees only the door's own requests. Answers a function that puts the
 * previous callback back, or null on a node without it (Node 20), where `serveAsHttp` does it.
 */
export function claimUpgrades(server: Server, ours: (req: IncomingMessage) => boolean): (() => void) | null {
  const narrowable = server as Narrowable;
  const previous = narrowable.shouldUpgradeCallback;
  if (typeof previous !== 'function') return null;
  narrowable.shouldUpgradeCallback = ours;
  // Closed after the answer, as serveAsHttp's are on Node 20: the same behaviour on every node.
  const closeAfter = (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.upgrade !== undefined) res.setHeader('Connection', 'close');
  };
  server.prependListener('request', closeAfter);
  return () => {
    narrowable.shouldUpgradeCallback = previous;
    server.off('request', closeAfter);
  };
}

/**
 * Serves a request handed to 'upgrade' as ordinary HTTP, by node's own parser: the request's
 * head is written again (without `Upgrade`, with `Connection: close`) in front of what followed
 * it (`head`: the start of its body, if any), and the socket is handed to the server as a new
 * connection. Node then parses the request as it parses any other — the body by its
 * Content-Length or chunks, the time limits, `Expect: 100-continue`, a malformed body's 400 —
 * and the app answers it. Building a ServerResponse for the first `req` instead would answer
 * it, but on Node 20 that request's body is never read: the parser that would have read it is
 * gone, and its bytes are raw on the socket.
 *
 * Only for a request whose message node considers complete (Node 20: an upgrade has no body
 * for the parser); a node that parses an upgrade's body into `req` has `shouldUpgradeCallback`
 * and never hands such a request here (`claimUpgrades`).
 */
export function serveAsHttp(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  // A request pipelined behind one still being answered: the new parser would queue its answer
  // behind a response it does not know, forever. It starts once that answer is out.
  const previous = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (previous && !previous.writableFinished) {
    previous.once('finish', () => setImmediate(() => !socket.destroyed && serveAsHttp(server, req, socket, head)));
    return;
  }
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (name !== 'upgrade' && name !== 'connection') lines.push(`${raw[i]}: ${raw[i + 1]}`);
  }
  // Closed after the answer: nothing after it is read as another request.
  lines.push('Connection: close', '', '');
  // Header values are latin1 as node decoded them: written back byte for byte.
  socket.unshift(Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), head]));
  server.emit('connection', socket);
}
