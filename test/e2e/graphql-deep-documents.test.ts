/**
 * A document whose brackets nest deeper than LIMITS.maxNesting is refused before it is parsed,
 * over HTTP and WebSocket. graphql-js parses by recursion: on a freshly started process (before
 * the JIT has compiled the parser) a list literal ~1,500 deep, within the token bound, overflowed
 * the stack and "Maximum call stack size exceeded" went to the client as the parse error. The
 * gateway runs in its own fresh process so that the first document it parses is the deep one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { freePort } from '../support/free-port';
import { pollUntil } from '../support/poll';

vi.setConfig({ testTimeout: 90_000 });

let child: ChildGateway;
let dataDir: string;
let liveKey: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gw-deep-'));
  child = await startChildGateway({ DATABASE_URL: undefined, REDIS_URL: undefined, DATA_DIR: dataDir }, await freePort());
  const out = await pollUntil(
    async () => child.output(),
    (o) => o.includes('live key:'),
    20_000,
    50,
  );
  liveKey = /live key:\s+(\S+)/.exec(out)![1]!;
});

afterAll(async () => {
  await child?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const REFUSAL = { message: 'The document nests brackets more than 64 levels deep.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } };
const nested = (open: string, close: string, depth: number, inner: string) => `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
const deep = (depth: number) => ({
  list: `{ videoJob(id: ${nested('[', ']', depth, '1')}) { id } }`,
  object: `{ videoQuote(input: ${nested('{a:', '}', depth, '1')}) { credits } }`,
  selections: `{ ${nested('a {', '}', depth, 'b')} }`,
  variableType: `query($v: ${nested('[', ']', depth, 'Int')}) { models { id } }`,
});
// Past what the 3,000-token bound lets through; a GET's URL is kept under Node's 16 KiB header bound.
const DEEP = deep(1400);
const DEEP_GET = deep(1000);

async function post(query: string) {
  const res = await fetch(`${child.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${liveKey}` },
    body: JSON.stringify({ query }),
  });
  const text = await res.text();
  expect(text).not.toMatch(/call stack|RangeError/i);
  return { status: res.status, body: JSON.parse(text) };
}

test('the first document of a fresh process, a list literal 5,000 deep, is refused by its nesting, not the stack', async () => {
  const res = await post(`{ videoJob(id: ${nested('[', ']', 5000, '1')}) { id } }`);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ errors: [REFUSAL] });
});

test.each(Object.keys(DEEP) as Array<keyof typeof DEEP>)('over HTTP, POST and GET: %s', async (name) => {
  expect(await post(DEEP[name])).toEqual({ status: 400, body: { errors: [REFUSAL] } });
  const get = await fetch(`${child.url}/graphql?query=${encodeURIComponent(DEEP_GET[name])}`, { headers: { authorization: `Bearer ${liveKey}` } });
  expect(get.status).toBe(400);
  expect(await get.json()).toEqual({ errors: [REFUSAL] });
});

test.each(Object.entries(DEEP))('over WebSocket: %s is an error message, the socket stays open', async (_name, query) => {
  const client = createClient({
    url: `${child.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${liveKey}` },
  });
  try {
    const errors = await new Promise<unknown>((resolve) =>
      client.subscribe({ query }, { next: () => undefined, error: resolve, complete: () => resolve('completed') }),
    );
    expect(errors).toEqual([REFUSAL]);
    const after = await new Promise<any>((resolve) =>
      client.subscribe({ query: '{ models { id } }' }, { next: resolve, error: resolve, complete: () => undefined }),
    );
    expect(after.data.models.length).toBeGreaterThan(5);
  } finally {
    await client.dispose();
  }
});

test('nesting within the bound is parsed and answered as usual', async () => {
  const res = await post(`{ videoJob(id: ${nested('[', ']', 60, '"x"')}) { id } }`);
  expect(res.status).toBe(400);
  expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  expect(res.body.errors[0].message).not.toMatch(/nests brackets/);
  expect(child.output()).not.toMatch(/call stack/i);
});
