/**
 * A client that breaks the WebSocket or graphql-transport-ws protocol is closed with the code
 * that says so, and the gateway's output gets at most one structured line for it: no stack, no
 * "Internal error … Please check your implementation" from graphql-ws's starter adapter (which
 * printed 14 lines with console.error, and closed 4500 as if the fault were ours). The gateway
 * runs as `npm start` runs it, in its own process, so its real output is what is checked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { freePort } from '../support/free-port';
import { pollUntil } from '../support/poll';

vi.setConfig({ testTimeout: 90_000 });

let child: ChildGateway;
let dataDir: string;
let liveKey: string;
let wsUrl: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gw-ws-protocol-'));
  // The embedded defaults whatever the suite's pass: the socket handling is the same on every store.
  child = await startChildGateway({ DATABASE_URL: undefined, REDIS_URL: undefined, DATA_DIR: dataDir, LOG_LEVEL: 'debug' }, await freePort());
  const out = await pollUntil(
    async () => child.output(),
    (o) => o.includes('live key:'),
    20_000,
    50,
  );
  liveKey = /live key:\s+(\S+)/.exec(out)![1]!;
  wsUrl = `${child.url.replace(/^http/, 'ws')}/graphql`;
});

afterAll(async () => {
  await child?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** Opens a graphql-transport-ws socket, optionally acknowledged, sends `frame`, answers the close code and reason. */
function closeAfter(frame: string, opts: { init?: boolean } = {}): Promise<{ code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
    ws.on('error', () => undefined); // the close event says what happened
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) }));
    ws.on('open', () => {
      if (!opts.init) return ws.send(frame);
      ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${liveKey}` } }));
    });
    ws.on('message', (data) => {
      if (JSON.parse(String(data)).type === 'connection_ack') ws.send(frame);
    });
    setTimeout(() => reject(new Error('the socket was not closed')), 10_000).unref();
  });
}

/**
 * What the gateway printed while `act` ran: until `expected` is among it, when a line is
 * expected, and a few turns more, in which the test reads what its logger wrote (synchronously)
 * before it closed the socket.
 */
async function outputDuring<T>(act: () => Promise<T>, expected?: RegExp): Promise<{ result: T; lines: string[] }> {
  const from = child.output().length;
  const lines = () =>
    child
      .output()
      .slice(from)
      .split('\n')
      .filter((l) => l.trim() !== '');
  const result = await act();
  if (expected)
    await pollUntil(
      async () => lines().some((l) => expected.test(l)),
      (seen) => seen,
      10_000,
      10,
    );
  for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  return { result, lines: lines() };
}

/** Every line is one JSON log record, none of them an error's stack or graphql-ws's complaint. */
function expectStructuredQuiet(lines: string[]): void {
  for (const line of lines) {
    expect(() => JSON.parse(line)).not.toThrow();
    expect(line).not.toMatch(/Internal error|Please check your implementation|"stack"|\\n\s+at /);
    expect(JSON.parse(line).level).toBeLessThanOrEqual(30); // debug or info
  }
}

test('a frame over the size limit: 1009 from ws, one debug line without a stack', async () => {
  const { result, lines } = await outputDuring(() => closeAfter('x'.repeat(200 * 1024)), /broke the WebSocket protocol/);
  expect(result.code).toBe(1009);
  expectStructuredQuiet(lines);
  expect(lines.filter((l) => /broke the WebSocket protocol/.test(l))).toHaveLength(1);
});

test.each([
  ['next', { type: 'next', id: '1', payload: { data: { x: 1 } } }, false],
  ['connection_ack', { type: 'connection_ack' }, false],
  ['error', { type: 'error', id: '1', payload: [{ message: 'x' }] }, false],
  ['next, once acknowledged', { type: 'next', id: '1', payload: { data: null } }, true],
])('a message only a server sends (%s): 4400, not 4500, and no stack', async (_name, message, init) => {
  const { result, lines } = await outputDuring(() => closeAfter(JSON.stringify(message), { init }), /only a server sends/);
  expect(result).toEqual({ code: 4400, reason: `Invalid message received: a client does not send "${message.type}"` });
  expectStructuredQuiet(lines);
  expect(lines.filter((l) => /only a server sends/.test(l))).toHaveLength(1);
});

test('an unknown type or a malformed message: 4400, nothing logged as an error', async () => {
  for (const frame of [JSON.stringify({ type: 'hello' }), JSON.stringify({ type: 'error' }), 'not json', JSON.stringify({ type: 'subscribe', id: '' })]) {
    const { result, lines } = await outputDuring(() => closeAfter(frame));
    expect(result.code).toBe(4400);
    expectStructuredQuiet(lines);
  }
});

test('the gateway still serves GraphQL over WebSocket afterwards', async () => {
  const answer = await new Promise<any>((resolve) => {
    const ws = new WebSocket(wsUrl, 'graphql-transport-ws');
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${liveKey}` } })));
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      if (msg.type === 'connection_ack') ws.send(JSON.stringify({ type: 'subscribe', id: 'q', payload: { query: '{ models { id } }' } }));
      if (msg.type === 'next') {
        resolve(msg.payload);
        ws.close();
      }
    });
  });
  expect(answer.data.models.length).toBeGreaterThan(5);
});
