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

jest.setTimeout(90_000);

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
  await Promise.all(
    heads.map(
      ([path, type]) =>
        new Promise<void>((resolve) => {
          const socket = connect(port, '127.0.0.1', () => {
            socket.write(
              `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${liveKey}\r\nContent-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
            );
            setTimeout(() => socket.destroy(), 300);
          });
          socket.on('close', () => resolve()).on('error', () => undefined);
        }),
    ),
  );
  await new Promise((r) => setTimeout(r, 300));
  expect(await fetch(`${child.url}/healthz`).then((r) => r.status)).toBe(200);
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
    const leaving = [false, true].map(async (viaExpress) => {
      const abort = new AbortController();
      setTimeout(() => abort.abort(), 300);
      const path = viaExpress ? { query: { x: '1' } } : {};
      await openai.chat.completions
        .create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] }, { signal: abort.signal, ...path })
        .catch(() => undefined);
    });
    await Promise.all(leaving);
    await new Promise((r) => setTimeout(r, 500));
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
  await new Promise((r) => setTimeout(r, 200));
  expect(child.output()).not.toMatch(/Warning/);

  for (const abort of aborts) abort.abort();
  expect(await child.stop()).toBe(0);
  expect(child.output()).not.toMatch(/Warning/);
});
