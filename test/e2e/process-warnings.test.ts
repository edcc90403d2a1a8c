/**
 * What an operator reads in the gateway's output under ordinary load: no node process warning.
 * Every chat call in flight listens for the drain deadline (so a stream can end itself properly
 * at shutdown); with node's default cap of 10 listeners per signal, the 11th concurrent call
 * printed "MaxListenersExceededWarning: Possible EventTarget memory leak detected". The gateway
 * runs as `npm start` runs it, in its own process, so its real stderr is what is checked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { freePort } from '../support/free-port';
import { writeModelsFile } from '../support/models-file';
import { pollUntil } from '../support/poll';

vi.setConfig({ testTimeout: 90_000 });

let upstream: FakeOpenAIUpstream;
let models: ReturnType<typeof writeModelsFile>;
let child: ChildGateway;
let dataDir: string;

beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  upstream.setMode('stall-mid-stream'); // one delta, then silence: the calls stay in flight
  models = writeModelsFile({ 'svc-chat-1': { provider: 'openai-compatible', upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 60 } });
  dataDir = mkdtempSync(join(tmpdir(), 'gw-warnings-'));
  // The embedded defaults, whatever the suite's pass: the listeners are the same on every store.
  child = await startChildGateway(
    { DATABASE_URL: undefined, REDIS_URL: undefined, DATA_DIR: dataDir, MODELS_FILE: models.path, SHUTDOWN_DRAIN_SECONDS: '1' },
    await freePort(),
  );
});

/**
 * Until the gateway has answered a request sent now: what it did on its earlier turns is done,
 * its log lines of it written (its logger writes synchronously, before that answer), and read
 * here in the turns after.
 */
async function gatewayCaughtUp(): Promise<void> {
  expect((await fetch(`${child.url}/healthz`)).status).toBe(200);
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
}

afterAll(async () => {
  await child?.stop();
  await upstream?.close();
  models?.remove();
  rmSync(dataDir, { recursive: true, force: true });
});

test('clients that hang up mid-body are not logged as errors, on either REST lane', async () => {
  const out = await pollUntil(
    async () => child.output(),
    (o) => o.includes('live key:'),
    20_000,
    50,
  );
  const liveKey = /live key:\s+(\S+)/.exec(out)![1];
  const port = Number(new URL(child.url).port);
  const body = JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hello' }] });
  // The JSON lane, Express (a query string sends it there), another JSON route, and a multipart upload.
  const heads = [
    ['/v1/chat/completions', 'application/json'],
    ['/v1/chat/completions?x=1', 'application/json'],
    ['/v1/images/generations', 'application/json'],
    ['/v1/images/edits', 'multipart/form-data; boundary=XyZ'],
  ];
  // Each request's head and the start of its body sent; once the gateway has read them (it has
  // answered a request sent after them), the clients hang up.
  const sockets = await Promise.all(
    heads.map(
      ([path, type]) =>
        new Promise<ReturnType<typeof connect>>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.write(
              `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${liveKey}\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
              () => resolve(socket),
            );
          });
          socket.on('error', () => undefined);
        }),
    ),
  );
  await gatewayCaughtUp();
  await Promise.all(sockets.map((socket) => new Promise((r) => socket.once('close', r).destroy())));
  await gatewayCaughtUp();
  expect(child.output()).not.toMatch(/"level":50|unhandled error/);
});

test('a client that leaves before its answer (the upstream still thinking) is not logged as an upstream failure', async () => {
  const out = await pollUntil(
    async () => child.output(),
    (o) => o.includes('live key:'),
    20_000,
    50,
  );
  const liveKey = /live key:\s+(\S+)/.exec(out)![1];
  const before = child.output().length;
  upstream.setMode('hang');
  try {
    const openai = new OpenAI({ apiKey: liveKey, baseURL: `${child.url}/v1`, maxRetries: 0 });
    // Both clients leave once the upstream holds both calls.
    const asked = upstream.requests.length;
    const aborts = [new AbortController(), new AbortController()];
    const leaving = [false, true].map(async (viaExpress, i) => {
      const path = viaExpress ? { query: { x: '1' } } : {};
      await openai.chat.completions
        .create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] }, { signal: aborts[i].signal, ...path })
        .catch(() => undefined);
    });
    await pollUntil(
      async () => upstream.requests.length,
      (n) => n >= asked + 2,
      10_000,
      10,
    );
    for (const abort of aborts) abort.abort();
    await Promise.all(leaving);
    await gatewayCaughtUp();
  } finally {
    upstream.setMode('stall-mid-stream');
  }
  expect(child.output().slice(before)).not.toMatch(/upstream_error|"level":(40|50)/);
});

test('sixteen streams in flight at once, then SIGTERM: no process warning in the output', async () => {
  const out = await pollUntil(
    async () => child.output(),
    (o) => o.includes('live key:'),
    20_000,
    50,
  );
  const liveKey = /live key:\s+(\S+)/.exec(out)![1];
  const openai = new OpenAI({ apiKey: liveKey, baseURL: `${child.url}/v1`, maxRetries: 0 });
  const aborts = Array.from({ length: 16 }, () => new AbortController());
  await Promise.all(
    aborts.map(async (abort) => {
      const stream = await openai.chat.completions.create(
        { model: 'svc-chat-1', messages: [{ role: 'user', content: 'a long story' }], stream: true },
        { signal: abort.signal },
      );
      // The first delta has arrived: this call is in flight on the gateway.
      expect((await stream[Symbol.asyncIterator]().next()).done).toBe(false);
    }),
  );
  // A warning is printed on a later tick than the listener that caused it.
  await gatewayCaughtUp();
  expect(child.output()).not.toMatch(/Warning/);

  for (const abort of aborts) abort.abort();
  expect(await child.stop()).toBe(0);
  expect(child.output()).not.toMatch(/Warning/);
});
