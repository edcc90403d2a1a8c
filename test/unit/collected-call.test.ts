/** collectedCall against a real HTTP server on a real socket: bounds, deadline and the caller's abort. */
import { createServer, type Server } from 'node:http';
import { Agent } from 'undici';
import { closeNow, listenLocal } from '../support/local-http';
import { CallTimedOut, collectedCall, ResponseTooLarge } from '../../src/providers/shared/collected-call';

let server: Server;
let origin: string;
const agent = new Agent();

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/ok') return void res.end('{"fine":true}');
    if (req.url === '/big') {
      res.writeHead(200);
      return void res.end('x'.repeat(10_000));
    }
    if (req.url === '/endless-error') {
      // An error body that never ends: only its head is wanted.
      res.writeHead(500);
      const timer = setInterval(() => res.write('e'.repeat(1024)), 5);
      res.on('close', () => clearInterval(timer));
      return;
    }
    // /hang: never answers.
  });
  origin = await listenLocal(server);
});
afterAll(async () => {
  await closeNow(server);
  await agent.close();
});

const call = (path: string, bounds: Partial<{ limitBytes: number; errorLimitBytes: number; timeoutMs: number; signal: AbortSignal }> = {}) =>
  collectedCall(agent, { origin, path, method: 'GET' }, { limitBytes: 1000, errorLimitBytes: 100, timeoutMs: 2000, ...bounds });

test('a whole answer within bounds', async () => {
  expect(await call('/ok')).toEqual({ status: 200, text: '{"fine":true}' });
});

test('a success body past its limit is refused', async () => {
  await expect(call('/big')).rejects.toBeInstanceOf(ResponseTooLarge);
});

test('an error body is cut at its limit and answered without waiting for its end', async () => {
  const res = await call('/endless-error', { timeoutMs: 30_000 });
  expect(res.status).toBe(500);
  expect(res.text).toBe('e'.repeat(100));
});

test('no answer within the deadline is a CallTimedOut', async () => {
  await expect(call('/hang', { timeoutMs: 200 })).rejects.toBeInstanceOf(CallTimedOut);
});

test('the caller abort ends the call, before or during it', async () => {
  const during = new AbortController();
  const arrived = new Promise<void>((r) => server.once('request', () => r()));
  const pending = call('/hang', { timeoutMs: 30_000, signal: during.signal });
  // Once the server holds the request, unanswered.
  await arrived;
  during.abort(new Error('client left'));
  await expect(pending).rejects.toThrow('client left');
  const before = new AbortController();
  before.abort(new Error('gone already'));
  await expect(call('/ok', { signal: before.signal })).rejects.toThrow('gone already');
});
