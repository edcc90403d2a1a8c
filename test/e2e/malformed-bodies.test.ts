/**
 * Bodies the gateway cannot read as they claim to be: every one is a 400 invalid_request_error
 * (never a 500, never silently read as something else), and nothing is charged. Classes: a
 * Content-Encoding the bytes do not follow; a JSON body under another Content-Type; JSON nested
 * past the bound (with and without an Idempotency-Key, on both REST lanes); multipart framing
 * busboy cannot follow; bytes that are not UTF-8; a `__proto__` key anywhere.
 */
import { connect } from 'node:net';
import { deflateSync, gzipSync } from 'node:zlib';
import { makePng } from '../support/fake-openai-upstream';
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

let acct: TestAccount;
let key: { id: string; secret: string };

// Registered before the gateway's fixture, so it reads the balance before the gateway closes.
afterAll(async () => {
  expect(await gw.balance(acct)).toBe(50);
});
// A short receive deadline, for the slow-sender test; every other request here arrives at once.
const gw = useTestGateway({ REQUEST_RECEIVE_SECONDS: '2' });
beforeAll(async () => {
  acct = await gw.newAccount(50);
  key = await gw.newKey(acct);
});

async function send(method: string, path: string, body: Buffer | string, headers: Record<string, string>, token = key.secret) {
  const res = await fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...headers }, body });
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as { error?: { type: string; code: string | null; param: string | null; message: string } } };
}
const post = (path: string, body: Buffer | string, headers: Record<string, string>, token = key.secret) => send('POST', path, body, headers, token);

const keyIds = (list: unknown): string[] => (list as { data: Array<{ id: string }> }).data.map((k) => k.id);

const CHAT = { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] };
const JSON_ROUTES: Array<[string, unknown]> = [
  ['/v1/chat/completions', CHAT],
  ['/v1/responses', { model: 'svc-chat-1', input: 'hi' }],
  ['/v1/images/generations', { model: 'svc-creative-v8', prompt: 'x', size: '64x64' }],
  ['/v1/video/queue', { model: 'svc-2.5-preview-text-to-video', prompt: 'x' }],
  ['/v1/video/quote', { model: 'svc-2.5-preview-text-to-video', duration: '5s', resolution: '480p' }],
];

describe('a Content-Encoding the bytes do not follow', () => {
  test.each(JSON_ROUTES)('%s: gzip, deflate and br that are not, 400 invalid_content_encoding; the real ones are read', async (path, body) => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const res = await post(path, 'plainly not compressed', { 'content-type': 'application/json', 'content-encoding': encoding });
      expect([encoding, res.status, res.body.error?.type, res.body.error?.code]).toEqual([encoding, 400, 'invalid_request_error', 'invalid_content_encoding']);
    }
    if (path !== '/v1/video/quote') return; // the one free route: the encoded body must be read as JSON
    for (const [encoding, zip] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
    ] as const) {
      const res = await post(path, zip(Buffer.from(JSON.stringify(body))), { 'content-type': 'application/json', 'content-encoding': encoding });
      expect([res.status, res.body.error]).toEqual([200, undefined]);
    }
  });
});

describe('a JSON body under another Content-Type is refused, not run on defaults', () => {
  test.each([['text/plain'], ['application/x-www-form-urlencoded'], ['']])('%j', async (contentType) => {
    const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
    for (const [path, body] of JSON_ROUTES) {
      const res = await post(path, Buffer.from(JSON.stringify(body)), headers); // a Buffer: fetch adds no Content-Type of its own
      expect([path, res.status, res.body.error?.code]).toEqual([path, 400, 'unsupported_content_type']);
    }
    const before = await gw.api('GET', '/account/api-keys', { token: acct.idToken });
    const created = await post('/account/api-keys', Buffer.from(JSON.stringify({ mode: 'test', name: 'should-be-test' })), headers, acct.idToken);
    expect([created.status, created.body.error?.code]).toEqual([400, 'unsupported_content_type']);
    const after = await gw.api('GET', '/account/api-keys', { token: acct.idToken });
    // No key was made (a key's lastUsed, written after its calls, may move meanwhile).
    expect(keyIds(after.body)).toEqual(keyIds(before.body));
  });

  test('on every other route that reads a body too (each route mounts its own parser)', async () => {
    const routes: Array<[string, string, string]> = [
      ['PATCH', `/account/api-keys/${key.id}`, acct.idToken],
      ['PATCH', `/account/api-keys/${key.id}/webhook`, acct.idToken],
      ['POST', '/v1/video/motion-control', key.secret],
      ['POST', '/v1/video/retrieve', key.secret],
      ['POST', `/admin/accounts/${acct.id}/credits`, ADMIN_TOKEN],
      ['PATCH', `/admin/accounts/${acct.id}`, ADMIN_TOKEN],
    ];
    for (const [method, path, token] of routes) {
      const res = await send(method, path, Buffer.from('{}'), { 'content-type': 'text/plain' }, token);
      expect([method, path, res.status, res.body.error?.code]).toEqual([method, path, 400, 'unsupported_content_type']);
    }
  });
});

describe('a body under another Content-Type to a route that does not exist is the 404 a JSON one gets', () => {
  test.each([
    ['POST', '/v1/nonexistent'],
    ['POST', '/v1/images/variations'], // an OpenAI route this gateway does not serve
    ['POST', '/v1/models'], // a path that exists, for another method
    ['PATCH', '/v1/chat/completions'],
    ['POST', '/account/nonexistent'],
  ])('%s %s', async (method, path) => {
    const token = path.startsWith('/account') ? acct.idToken : key.secret;
    const asJson = await send(method, path, '{}', { 'content-type': 'application/json' }, token);
    expect([asJson.status, asJson.body.error?.code]).toEqual([404, 'route_not_found']);
    for (const [contentType, body] of [
      ['text/plain', '{}'],
      ['application/x-www-form-urlencoded', 'a=1'],
      ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nx\r\n--XyZ--\r\n'],
    ]) {
      const res = await send(method, path, Buffer.from(body), { 'content-type': contentType }, token);
      expect([contentType, res.status, res.body]).toEqual([contentType, 404, asJson.body]);
    }
  });
});

describe('a body that is valid JSON but not an object is a 400 saying it must be one, on every route that reads a body', () => {
  test.each([['[]'], ['null'], ['"x"'], ['1'], ['true'], ['[{"url": null}]']])('%s', async (text) => {
    const routes: Array<[string, string, string, Record<string, string>?]> = [
      ['PATCH', `/account/api-keys/${key.id}/webhook`, acct.idToken],
      ['POST', '/account/api-keys', acct.idToken],
      ['POST', '/v1/chat/completions', key.secret], // the JSON lane
      ['POST', '/v1/chat/completions', key.secret, { 'idempotency-key': `not-object-${text}` }], // Express
      ['POST', '/v1/responses', key.secret],
      ['POST', '/v1/video/quote', key.secret],
      ['PATCH', `/admin/accounts/${acct.id}`, ADMIN_TOKEN],
    ];
    for (const [method, path, token, extra] of routes) {
      const res = await send(method, path, text, { 'content-type': 'application/json', ...extra }, token);
      expect([method, path, res.status, res.body.error]).toEqual([
        method,
        path,
        400,
        { type: 'invalid_request_error', code: null, param: null, message: 'The request body must be a JSON object.' },
      ]);
    }
  });
});

describe('a body that is not UTF-8 is refused, not read with U+FFFD in it', () => {
  test.each(JSON_ROUTES)('%s, on the JSON lane and (with an Idempotency-Key) through Express', async (path, body) => {
    const text = JSON.stringify({ ...(body as object), user: '@' });
    const [before, after] = text.split('@') as [string, string];
    const bytes = Buffer.concat([Buffer.from(before), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from(after)]);
    for (const extra of [{}, { 'idempotency-key': `utf8-${path}` }] as Record<string, string>[]) {
      const res = await post(path, bytes, { 'content-type': 'application/json', ...extra });
      expect([path, res.status, res.body.error?.code]).toEqual([path, 400, 'invalid_encoding']);
    }
  });
});

describe('JSON nested past the bound', () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  test.each([[65], [20_000]])('%i levels: 400 body_too_deep on every JSON route, with and without an Idempotency-Key', async (depth) => {
    for (const [path, body] of JSON_ROUTES) {
      const text = JSON.stringify({ ...(body as object), metadata: '@' }).replace('"@"', nested(depth));
      for (const idem of [{}, { 'idempotency-key': `deep-${depth}-${path}` }] as Record<string, string>[]) {
        const res = await post(path, text, { 'content-type': 'application/json', ...idem });
        expect([path, res.status, res.body.error?.code]).toEqual([path, 400, 'body_too_deep']);
      }
    }
  });

  test('64 levels are within the bound (the field is then judged on its own: a 400 naming it)', async () => {
    const text = JSON.stringify({ ...CHAT, metadata: '@' }).replace('"@"', nested(63));
    const res = await post('/v1/chat/completions', text, { 'content-type': 'application/json' });
    expect([res.status, res.body.error?.param]).toEqual([400, 'metadata']);
  });
});

describe('JSON with more values than any request needs', () => {
  // Over 100,000 values in under 1 MB (the limit of most routes): a key each, an array of
  // numbers, an array of empty objects.
  const bodies: Array<[string, (base: object) => string]> = [
    ['keys', (base) => JSON.stringify(base).replace(/}$/, Array.from({ length: 105_000 }, (_, i) => `,"${i.toString(36)}":1`).join('') + '}')],
    ['array', (base) => JSON.stringify({ ...base, metadata: '@' }).replace('"@"', `[${'0,'.repeat(150_000)}0]`)],
    ['nested objects', (base) => JSON.stringify({ ...base, metadata: '@' }).replace('"@"', `[${'{},'.repeat(150_000)}{}]`)],
  ];
  test.each(bodies)('%s: 400 body_too_complex on every JSON route, with and without an Idempotency-Key, before the parse', async (_name, build) => {
    for (const [path, body] of JSON_ROUTES) {
      const text = build(body as object);
      expect(text.length).toBeLessThan(1024 * 1024);
      for (const idem of [{}, { 'idempotency-key': `complex-${_name}-${path}` }] as Record<string, string>[]) {
        const res = await post(path, text, { 'content-type': 'application/json', ...idem });
        expect([path, res.status, res.body.error?.type, res.body.error?.code]).toEqual([path, 400, 'invalid_request_error', 'body_too_complex']);
      }
    }
  });

  test('commas, brackets and escaped quotes inside strings are text, not values: a long conversation is answered', async () => {
    const noisy = 'a, [b], {c}, \\"d\\" '.repeat(40);
    const messages = Array.from({ length: 1_998 }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${noisy} ${i}` }));
    messages.push({ role: 'user', content: 'and now?' });
    const text = JSON.stringify({ ...CHAT, messages, max_tokens: 4 });
    expect((text.match(/,/g) ?? []).length).toBeGreaterThan(150_000);
    // On a test key (the simulator, free): this file's live account must not move.
    const testKey = await gw.newKey(acct, { mode: 'test' });
    for (const idem of [{}, { 'idempotency-key': 'noisy-conversation' }] as Record<string, string>[]) {
      const res = await post('/v1/chat/completions', text, { 'content-type': 'application/json', ...idem }, testKey.secret);
      expect([res.status, res.body.error]).toEqual([200, undefined]);
    }
  });
});

describe('multipart framing busboy cannot follow, on image edits', () => {
  const boundary = 'XyZ';
  const part = (name: string, value: string | Buffer, filename?: string) =>
    Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"\r\nContent-Type: image/png` : ''}\r\n\r\n`,
      ),
      Buffer.from(value),
      Buffer.from('\r\n'),
    ]);
  const form = (...parts: Buffer[]) => Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]);
  const good = form(part('prompt', 'a hat'), part('image', makePng(32, 32), 'in.png'));

  test.each([
    ['no boundary in the Content-Type', good, 'multipart/form-data'],
    ['another boundary than the body uses', good, 'multipart/form-data; boundary=OTHER'],
    ['cut before the closing boundary', good.subarray(0, good.length - 8), `multipart/form-data; boundary=${boundary}`],
    ['binary garbage', Buffer.alloc(300, 1), `multipart/form-data; boundary=${boundary}`],
    ['a NUL in a part name', form(part('pro\u0000mpt', 'x'), part('image', makePng(32, 32), 'in.png')), `multipart/form-data; boundary=${boundary}`],
  ])('%s: 400', async (_label, body, contentType) => {
    const res = await post('/v1/images/edits', body, { 'content-type': contentType });
    expect([res.status, res.body.error?.type]).toEqual([400, 'invalid_request_error']);
  });

  test.each([['images'], ['foo']])('a file field named %j: 400 naming it, saying where images go', async (field) => {
    const res = await post('/v1/images/edits', form(part('prompt', 'x'), part(field, makePng(32, 32), 'in.png')), {
      'content-type': `multipart/form-data; boundary=${boundary}`,
    });
    expect([res.status, res.body.error?.param]).toEqual([400, field]);
    expect(res.body.error?.message).toContain("'image'");
  });
});

describe('a `__proto__` key is refused wherever it is, not skipped', () => {
  test.each([
    ['metadata', { ...CHAT, metadata: JSON.parse('{"__proto__": {"x": 1}}') }, 'metadata.__proto__'],
    ['logit_bias', { ...CHAT, logit_bias: JSON.parse('{"__proto__": "bad"}') }, 'logit_bias.__proto__'],
    ['a message', { ...CHAT, messages: [JSON.parse('{"role": "user", "content": "hi", "__proto__": {}}')] }, 'messages[0].__proto__'],
  ])('%s', async (_label, body, param) => {
    // JSON.stringify writes an own `__proto__` key as the client would send it.
    const res = await post('/v1/chat/completions', JSON.stringify(body), { 'content-type': 'application/json' });
    expect([res.status, res.body.error?.param]).toEqual([400, param]);
  });
});

/** Everything a raw socket receives until the server closes it. */
function rawExchange(write: (socket: ReturnType<typeof connect>) => void): Promise<string> {
  const port = Number(new URL(gw.url).port);
  return new Promise<string>((resolve) => {
    let got = '';
    const socket = connect(port, '127.0.0.1', () => write(socket));
    socket.on('data', (d) => (got += d.toString()));
    socket.on('close', () => resolve(got)).on('error', () => undefined);
  });
}

/** A raw HTTP/1.1 answer: its status line, headers (lower-cased names) and body. */
function parseRaw(answer: string) {
  const [head, ...rest] = answer.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { statusLine, headers, body: rest.join('\r\n\r\n') };
}

function expectRequestTimeout(answer: string) {
  const { statusLine, headers, body } = parseRaw(answer);
  expect(statusLine).toBe('HTTP/1.1 408 Request Timeout');
  expect(headers).toMatchObject({ connection: 'close', 'content-type': 'application/json; charset=utf-8', 'x-request-id': expect.stringMatching(/^req_/) });
  expect(Number(headers['content-length'])).toBe(Buffer.byteLength(body));
  expect(JSON.parse(body)).toEqual({
    error: { type: 'invalid_request_error', code: 'request_timeout', param: null, message: expect.stringMatching(/not received in time/) },
  });
}

test('a client that sends its body too slowly is answered 408 at the receive deadline, in the OpenAI error shape, and cut off; nothing is charged', async () => {
  const body = JSON.stringify(CHAT);
  const answer = await rawExchange((socket) => {
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    let sent = 0;
    // One byte every 300 ms: the body would take ~20 s.
    const drip = setInterval(() => (sent < body.length && !socket.destroyed ? socket.write(body[sent++]) : clearInterval(drip)), 300);
    socket.on('close', () => clearInterval(drip));
  });
  expectRequestTimeout(answer);
});

test('so is one whose headers never finish (no request has started: the answer still has its request id)', async () => {
  const answer = await rawExchange((socket) => {
    socket.write('GET /v1/models HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => (socket.destroyed ? clearInterval(drip) : socket.write('X-Slow: 1\r\n')), 300);
    socket.on('close', () => clearInterval(drip));
  });
  expectRequestTimeout(answer);
});

test("other malformed requests get node's statuses, in the API's error shape, and the connection closes", async () => {
  const garbage = parseRaw(await rawExchange((socket) => socket.write('NOT HTTP AT ALL\r\n\r\n')));
  expect(garbage.statusLine).toBe('HTTP/1.1 400 Bad Request');
  expect(garbage.headers).toMatchObject({
    connection: 'close',
    'content-type': 'application/json; charset=utf-8',
    'x-request-id': expect.stringMatching(/^req_/),
  });
  expect(JSON.parse(garbage.body).error).toMatchObject({ type: 'invalid_request_error', code: 'malformed_request', param: null });
  const huge = parseRaw(await rawExchange((socket) => socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)));
  expect(huge.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
  expect(JSON.parse(huge.body).error).toMatchObject({ type: 'invalid_request_error', code: 'request_headers_too_large' });
  // A chunked body whose chunk size is not hex: the request itself is malformed.
  const badChunk = parseRaw(
    await rawExchange((socket) =>
      socket.write(
        `POST /account/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.idToken}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
      ),
    ),
  );
  expect(badChunk.statusLine).toBe('HTTP/1.1 400 Bad Request');
  expect(JSON.parse(badChunk.body).error.code).toBe('malformed_request');
});

describe('Expect: 100-continue: the 100 goes out when the body is read, so a refusal comes alone and no upload is wasted', () => {
  const expectRefusedAlone = (answer: string, status: number) => {
    expect(answer.startsWith('HTTP/1.1 100')).toBe(false);
    const { statusLine, headers, body } = parseRaw(answer);
    expect(statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(headers.connection).toBe('close');
    return JSON.parse(body) as { error: { type: string; code: string | null } };
  };

  test('a bad key with a 30 MB upload declared: 401 without a 100', async () => {
    const answer = await rawExchange((socket) =>
      socket.write(
        `POST /v1/images/edits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer svc_live_nope\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 31457280\r\nExpect: 100-continue\r\n\r\n`,
      ),
    );
    expect(expectRefusedAlone(answer, 401).error.type).toBe('authentication_error');
  });

  test("a JSON body declared past its route's limit: 413 without a 100", async () => {
    const answer = await rawExchange((socket) =>
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nContent-Length: 52428800\r\nExpect: 100-continue\r\n\r\n`,
      ),
    );
    expect(expectRefusedAlone(answer, 413).error.type).toBe('request_too_large');
  });

  test('an expectation other than 100-continue: a 417 in the error shape naming the header, and the connection closes', async () => {
    for (const expectation of ['something-else', '200-ok']) {
      const answer = await rawExchange((socket) =>
        socket.write(
          `POST /v1/images/generations HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key.secret}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: ${expectation}\r\n\r\n{}`,
        ),
      );
      expect(expectRefusedAlone(answer, 417).error).toMatchObject({ type: 'invalid_request_error', param: 'Expect', code: 'expectation_failed' });
    }
  });

  test('an accepted request gets its 100, then its answer, and the connection stays open', async () => {
    const body = JSON.stringify({ name: 'after-continue' });
    const port = Number(new URL(gw.url).port);
    const got = await new Promise<string>((resolve, reject) => {
      let text = '';
      let sent = false;
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          `POST /account/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.idToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
        ),
      );
      socket.on('data', (d) => {
        text += d.toString();
        if (!sent && text.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
          sent = true;
          socket.write(body);
        }
        if (/\r\n\r\n\{.*\}$/s.test(text.slice('HTTP/1.1 100 Continue\r\n\r\n'.length))) {
          socket.end();
          resolve(text);
        }
      });
      socket.on('error', reject);
    });
    expect(got.startsWith('HTTP/1.1 100 Continue\r\n\r\n')).toBe(true);
    const { statusLine, headers, body: text } = parseRaw(got.slice('HTTP/1.1 100 Continue\r\n\r\n'.length));
    expect(statusLine).toMatch(/^HTTP\/1\.1 20[01] /);
    expect(headers.connection).toBe('keep-alive');
    expect(JSON.parse(text)).toMatchObject({ name: 'after-continue' });
  });
});

describe('bytes past a request read whole: the request has run, so its client gets its answer, then the connection closes', () => {
  const keyNames = async () => (await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data as Array<{ id: string; name: string }>;

  test('more bytes than the Content-Length', async () => {
    const body = JSON.stringify({ name: 'stray-bytes' });
    const answer = await rawExchange((socket) =>
      socket.write(
        `POST /account/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.idToken}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}garbage\r\n\r\n`,
      ),
    );
    const { statusLine, headers, body: text } = parseRaw(answer);
    expect(statusLine).toMatch(/^HTTP\/1\.1 20[01] /);
    expect(headers.connection).toBe('close');
    const created = JSON.parse(text) as { id: string; name: string };
    expect(created).toMatchObject({ name: 'stray-bytes', id: expect.stringMatching(/^svc_live_/) });
    // The answer the client read is the one the server acted on.
    expect((await keyNames()).map((k) => k.id)).toContain(created.id);
  });

  test("a DELETE with a body but no Content-Length (as node's own client sends one)", async () => {
    const victim = await gw.newKey(acct, { name: 'deleted-with-a-body' });
    const answer = await rawExchange((socket) =>
      socket.write(
        `DELETE /account/api-keys/${victim.id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${acct.idToken}\r\nContent-Type: application/json\r\n\r\n{"why":"x"}`,
      ),
    );
    const { statusLine, headers } = parseRaw(answer);
    expect(statusLine).toMatch(/^HTTP\/1\.1 2\d\d /);
    expect(headers.connection).toBe('close');
    expect((await keyNames()).map((k) => k.id)).not.toContain(victim.id);
  });
});
