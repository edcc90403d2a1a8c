/**
 * The fan-out bench's own graphql-ws client (bench/graphql-ws-wire.ts) against a real `ws`
 * server: the bench's latency figures are only as good as its reading of the wire.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { WireClient } from '../../../bench/graphql-ws-wire';

let http: Server;
let wss: WebSocketServer;
let url: string;
let onConnection: (socket: WebSocket) => void = () => undefined;

beforeAll(async () => {
  http = createServer();
  wss = new WebSocketServer({ server: http, handleProtocols: (protocols) => (protocols.has('graphql-transport-ws') ? 'graphql-transport-ws' : false) });
  wss.on('connection', (socket) => onConnection(socket));
  await new Promise<void>((ok) => http.listen(0, '127.0.0.1', ok));
  url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  for (const c of wss.clients) c.terminate();
  await new Promise((ok) => wss.close(ok));
  await new Promise((ok) => http.close(ok));
});

function collector() {
  const messages: Array<Record<string, unknown>> = [];
  let closed: { code: number; reason: string } | undefined;
  const waiters: Array<() => void> = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  return {
    messages,
    get closed() {
      return closed;
    },
    handlers: {
      message: (m: Record<string, unknown>) => (messages.push(m), wake()),
      closed: (code: number, reason: string) => ((closed = { code, reason }), wake()),
    },
    /** Looks at what `until` waits for again (the server side received something). */
    wake,
    /** Until `ok()` holds, looked at again on each message, on the close, and on each `wake`. */
    until: async (ok: () => boolean) => {
      while (!ok()) await new Promise<void>((r) => waiters.push(r));
    },
  };
}

test('messages of every length form, sent together or in pieces, arrive whole and in order; the client masks what it sends', async () => {
  const received: string[] = [];
  const c = collector();
  onConnection = (socket) => {
    socket.on('message', (data) => (received.push(String(data)), c.wake()));
    const sizes = [0, 10, 125, 126, 200, 65_535, 65_536, 300_000];
    for (const n of sizes) socket.send(JSON.stringify({ type: 'next', n, pad: 'x'.repeat(n) }));
    // One message in three fragments.
    socket.send('{"type":"frag', { fin: false });
    socket.send('mented","part', { fin: false });
    socket.send('s":3}', { fin: true });
  };
  const client = await WireClient.open(url, c.handlers, Date.now);
  client.send({ type: 'connection_init', payload: { authorization: 'Bearer k' } });
  await c.until(() => c.messages.length === 9 && received.length === 1);
  expect(c.messages.slice(0, 8).map((m) => [m.n, (m.pad as string).length])).toEqual([0, 10, 125, 126, 200, 65_535, 65_536, 300_000].map((n) => [n, n]));
  expect(c.messages[8]).toEqual({ type: 'fragmented', parts: 3 });
  // ws refuses unmasked client frames, so an answer read as JSON proves the masking.
  expect(JSON.parse(received[0])).toEqual({ type: 'connection_init', payload: { authorization: 'Bearer k' } });
  client.close();
  await c.until(() => c.closed !== undefined);
});

test('a ping is answered with a pong carrying its payload', async () => {
  let ponged!: (payload: string) => void;
  const pong = new Promise<string>((r) => (ponged = r));
  onConnection = (socket) => {
    socket.on('pong', (data) => ponged(String(data)));
    socket.ping('are-you-there');
  };
  const c = collector();
  const client = await WireClient.open(url, c.handlers, Date.now);
  expect(await pong).toBe('are-you-there');
  client.close();
});

test("the server's close code and reason reach the client", async () => {
  onConnection = (socket) => socket.close(4403, 'Forbidden');
  const c = collector();
  await WireClient.open(url, c.handlers, Date.now);
  await c.until(() => c.closed !== undefined);
  expect(c.closed).toEqual({ code: 4403, reason: 'Forbidden' });
});

test('a refused upgrade or a server without the subprotocol is an error, not a connection', async () => {
  await expect(WireClient.open(url.replace(/:\d+/, ':1'), collector().handlers, Date.now)).rejects.toThrow();
  const noProtocol = createServer();
  const bare = new WebSocketServer({ server: noProtocol, handleProtocols: () => false });
  await new Promise<void>((ok) => noProtocol.listen(0, '127.0.0.1', ok));
  try {
    await expect(WireClient.open(`ws://127.0.0.1:${(noProtocol.address() as AddressInfo).port}/graphql`, collector().handlers, Date.now)).rejects.toThrow(
      'bad WebSocket handshake answer',
    );
  } finally {
    for (const c of bare.clients) c.terminate();
    await new Promise((ok) => bare.close(ok));
    await new Promise((ok) => noProtocol.close(ok));
  }
  const plain = createServer((_req, res) => res.writeHead(404).end());
  await new Promise<void>((ok) => plain.listen(0, '127.0.0.1', ok));
  try {
    await expect(WireClient.open(`ws://127.0.0.1:${(plain.address() as AddressInfo).port}/graphql`, collector().handlers, Date.now)).rejects.toThrow(
      'upgrade answered 404',
    );
  } finally {
    await new Promise((ok) => plain.close(ok));
  }
});
