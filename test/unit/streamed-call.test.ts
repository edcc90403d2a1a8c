/** streamedCall against a real HTTP server on a real socket: order, end, destroy, abort, timeouts, backpressure. */
import { createServer, type Server, type ServerResponse } from 'node:http';
import { Agent } from 'undici';
import { closeNow, listenLocal } from '../support/local-http';
import { pollUntil } from '../support/poll';
import { streamedCall } from '../../src/providers/shared/streamed-call';

let server: Server;
let origin: string;
const agent = new Agent();
let lastClosed: Promise<void> = Promise.resolve();
let sawBackpressure = false;

/** Writes the first part at once, then one part every `everyMs`, then ends. */
function drip(res: ServerResponse, parts: string[], everyMs: number) {
  res.write(parts[0]);
  let i = 1;
  const timer = setInterval(() => {
    if (i < parts.length) res.write(parts[i++]);
    else {
      clearInterval(timer);
      res.end();
    }
  }, everyMs);
  res.on('close', () => clearInterval(timer));
}

beforeAll(async () => {
  server = createServer((req, res) => {
    lastClosed = new Promise((r) => res.on('close', () => r()));
    res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'text/event-stream' });
    if (req.url === '/events' || req.url === '/missing') return drip(res, ['a', 'b', 'c'], 5);
    if (req.url === '/slow') return drip(res, ['first', 'second'], 10_000);
    if (req.url === '/flood') {
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < 1000) {
          sent++;
          if (!res.write(chunk)) {
            sawBackpressure = true;
            return void res.once('drain', pump);
          }
        }
        res.end();
      };
      return pump();
    }
  });
  origin = await listenLocal(server);
});
afterAll(async () => {
  await closeNow(server);
  await agent.close();
});

const open = (path: string, signal?: AbortSignal, extra: object = {}) => streamedCall(agent, { origin, path, method: 'GET', ...extra }, signal);

async function readAll(body: AsyncIterable<Buffer>): Promise<string> {
  let text = '';
  for await (const c of body) text += c.toString();
  return text;
}

test('the status and headers first, then every chunk in order, then the end', async () => {
  const res = await open('/events');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/event-stream');
  expect(await readAll(res.body)).toBe('abc');
  const missing = await open('/missing');
  expect(missing.status).toBe(404);
  expect(await readAll(missing.body)).toBe('abc');
});

test('destroy() ends the iteration and closes the call', async () => {
  const res = await open('/slow');
  const it = res.body[Symbol.asyncIterator]();
  expect((await it.next()).value.toString()).toBe('first');
  const waiting = it.next();
  res.body.destroy();
  expect(await waiting).toEqual({ value: undefined, done: true });
  await lastClosed;
});

test("the caller's abort fails the iteration", async () => {
  const abort = new AbortController();
  const res = await open('/slow', abort.signal);
  // While the body is being read (its second part is 10 s away).
  const reading = readAll(res.body);
  abort.abort(new Error('client left'));
  await expect(reading).rejects.toThrow('client left');
});

test('a body that goes quiet past bodyTimeout fails with undici’s timeout', async () => {
  const res = await open('/slow', undefined, { bodyTimeout: 100 });
  await expect(readAll(res.body)).rejects.toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
});

test('a reader that does not keep up pauses the socket instead of queueing the flood', async () => {
  const res = await open('/flood');
  // Nothing read yet: the server's writes are held back before the flood is through.
  await pollUntil(
    async () => sawBackpressure,
    (saw) => saw,
    10_000,
    10,
  );
  expect((await readAll(res.body)).length).toBe(1000 * 64 * 1024);
});
