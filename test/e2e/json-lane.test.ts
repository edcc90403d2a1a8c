/**
 * The JSON lane (rest/json-lane.ts) serves POST /v1/chat/completions and /v1/responses outside
 * Express, and hands everything else to it. The same request sent both ways (a query string is
 * enough to make the lane hand it on) must get the same answer: status, error body, and no money
 * moved for a refusal; a good call is charged once either way. Raw sockets send what an HTTP
 * client would refuse to (a lying Content-Length, a body that never ends, a chunked flood).
 */
import { connect } from 'node:net';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();
let acct: TestAccount;
let key: { id: string; secret: string };

beforeAll(async () => {
  acct = await gw.newAccount(50);
  key = await gw.newKey(acct);
});

const CHAT = { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hello' }], max_tokens: 8 };
const MB = 1024 * 1024;

async function post(path: string, body: string | Buffer, headers: Record<string, string>) {
  const res = await fetch(gw.url + path, { method: 'POST', body, headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text.startsWith('{') ? JSON.parse(text) : undefined };
}

/** The same request through the lane and through Express, which must agree. */
async function bothWays(path: string, body: string | Buffer, headers: Record<string, string>) {
  const lane = await post(path, body, headers);
  const express = await post(`${path}?via=express`, body, headers);
  expect({ status: lane.status, body: lane.json }).toEqual({ status: express.status, body: express.json });
  return lane;
}

describe.each(['/v1/chat/completions', '/v1/responses'])('%s', (path) => {
  const auth = () => ({ authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' });

  test.each([
    ['not JSON', '{"model": "svc-chat-1",', 400],
    ['a JSON string', '"hello"', 400],
    ['a JSON number', '42', 400],
    ['an array', '[1, 2]', 400],
    ['an empty body', '', 400],
    ['a BOM then an object without its fields', '\uFEFF{}', 400],
    ['an unknown field', JSON.stringify({ ...CHAT, surprise: true }), 400],
  ])('%s: the same clear 4xx both ways, nothing charged', async (_label, body, status) => {
    const before = await gw.balance(acct);
    const res = await bothWays(path, body, auth());
    expect(res.status).toBe(status);
    expect(res.json.error).toMatchObject({ type: 'invalid_request_error' });
    expect(res.json.error.message).not.toMatch(/SyntaxError|at JSON|node_modules/);
    expect(await gw.balance(acct)).toBe(before);
  });

  test('no key, a malformed header and an unknown key: 401 both ways, before the body is read', async () => {
    for (const authorization of [undefined, 'Basic abc', 'Bearer svc_live_nope']) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (authorization) headers.authorization = authorization;
      const res = await bothWays(path, JSON.stringify(CHAT), headers);
      expect(res.status).toBe(401);
    }
  });

  test('a body past 25 MB: 413 both ways', async () => {
    const big = JSON.stringify({ ...CHAT, messages: [{ role: 'user', content: 'x'.repeat(26 * MB) }] });
    const res = await bothWays(path, big, auth());
    expect(res.status).toBe(413);
    expect(res.json.error.type).toBe('request_too_large');
  });
});

test('a good call is answered and charged once through the lane, with its headers', async () => {
  const before = await gw.balance(acct);
  const res = await post('/v1/chat/completions', JSON.stringify(CHAT), {
    authorization: `Bearer ${key.secret}`,
    'content-type': 'application/json; charset=utf-8',
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(res.json.choices[0].message.role).toBe('assistant');
  const charged = Number(res.headers.get('x-svc-credits'));
  expect(charged).toBeGreaterThan(0);
  expect(res.headers.get('x-ratelimit-limit-requests')).toBeTruthy();
  expect(before - (await gw.balance(acct))).toBeCloseTo(charged, 6);
});

test('one keep-alive connection: a body that came whole with its headers, then one that trickles in, are each read whole and charged once', async () => {
  const before = await gw.balance(acct);
  const body = JSON.stringify(CHAT);
  const head = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  const url = new URL(gw.url);
  const socket = connect(Number(url.port), url.hostname);
  let text = '';
  socket.on('data', (d) => (text += d.toString()));
  const answers = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const check = () => (text.split('"object":"chat.completion"').length > n ? resolve() : socket.once('data', check));
      socket.once('close', () => reject(new Error(`closed after: ${text}`)));
      check();
    });
  try {
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(head + body);
    await answers(1);
    // The body in two writes: the first handed to the kernel, and read by the server (this
    // process) in the turns after it, before the second is sent.
    await new Promise((r) => socket.write(head + body.slice(0, 10), r));
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    socket.write(body.slice(10));
    await answers(2);
  } finally {
    socket.destroy();
  }
  const statuses = text.match(/HTTP\/1\.1 \d+/g);
  expect(statuses).toEqual(['HTTP/1.1 200', 'HTTP/1.1 200']);
  const charged = [...text.matchAll(/x-svc-credits: ([\d.]+)/gi)].reduce((sum, m) => sum + Number(m[1]), 0);
  expect(charged).toBeGreaterThan(0);
  expect(before - (await gw.balance(acct))).toBeCloseTo(charged, 6);
});

/** Sends raw bytes and returns what came back once the server closed the connection (every refusal here closes it). */
function rawExchange(bytes: string[]): Promise<{ text: string }> {
  const url = new URL(gw.url);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => resolve({ text }));
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      for (const b of bytes) socket.write(b);
    });
  });
}

test('a declared Content-Length past the limit is refused at once with Connection: close, the upload unread', async () => {
  const { text } = await rawExchange([
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nContent-Length: ${30 * MB}\r\n\r\n{"model":`,
  ]);
  expect(text).toMatch(/^HTTP\/1\.1 413/);
  expect(text.toLowerCase()).toContain('connection: close');
  expect(text).toContain('request_too_large');
});

test('a chunked upload that grows past the limit is cut off with 413 and the connection closed', async () => {
  const chunk = 'x'.repeat(MB);
  const pieces = [
    `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`,
  ];
  for (let i = 0; i < 27; i++) pieces.push(`${chunk.length.toString(16)}\r\n${chunk}\r\n`);
  // Answered once the server has closed the connection.
  const { text } = await rawExchange(pieces);
  expect(text).toMatch(/^HTTP\/1\.1 413/);
});

test('lane requests are labelled by their route in /metrics', async () => {
  await post('/v1/chat/completions', '{', { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' });
  const metrics = await gw.api('GET', '/metrics');
  expect(metrics.body).toMatch(/svc_http_requests_total\{route="\/v1\/chat\/completions",status="400"\} [1-9]/);
});
