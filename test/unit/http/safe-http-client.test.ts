import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Agent } from 'undici';
import { OutboundRequestError, SafeHttpClient } from '../../../src/infra/http/safe-http-client';
import { checkCallerUrl, type HostLookup } from '../../../src/infra/http/url-check';

// Every test talks to this one server on 127.0.0.1 and nowhere else. Names used in URLs are
// resolved by injected lookups that only ever answer 127.0.0.1 (or refuse).
let server: http.Server;
let port: number;
const seen: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.url ?? '');
    const path = (req.url ?? '').split('?')[0];
    switch (path) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'image/png; charset=binary', 'x-multi': ['a', 'b'] });
        res.end('PNGDATA');
        return;
      case '/echo': {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ method: req.method, ua: req.headers['user-agent'], sig: req.headers['x-sig'], body: Buffer.concat(chunks).toString() }));
        });
        return;
      }
      case '/redirect':
        res.writeHead(302, { location: `http://127.0.0.1:${port}/ok` });
        res.end('moved');
        return;
      case '/missing':
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('nope');
        return;
      case '/slow-headers':
        // Never answers; the client must give up on its own.
        return;
      case '/slow-body':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.write('x');
        // ...and never finishes.
        return;
      case '/big-declared':
        res.writeHead(200, { 'content-length': String(1024 * 1024) });
        res.write(Buffer.alloc(1024));
        return; // never sends the rest: the client must refuse on the header alone
      case '/big-chunked':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let i = 0; i < 64; i++) res.write(Buffer.alloc(1024, 1));
        res.end();
        return;
      default:
        res.writeHead(500);
        res.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen.length = 0;
});

const clients: SafeHttpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const loopbackLookup: HostLookup = async () => [{ address: '127.0.0.1', family: 4 }];

function client(opts: Partial<ConstructorParameters<typeof SafeHttpClient>[0]> = {}): SafeHttpClient {
  const c = new SafeHttpClient({ allowLocal: true, defaultTimeoutMs: 2000, maxResponseBytes: 1024 * 1024, ...opts });
  clients.push(c);
  return c;
}

async function failure(p: Promise<unknown>): Promise<OutboundRequestError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(OutboundRequestError);
    return err as OutboundRequestError;
  }
  throw new Error('expected the request to fail');
}

describe('SafeHttpClient', () => {
  it('refuses a loopback literal when allowLocal is false; the server never sees the request', async () => {
    const c = client({ allowLocal: false });
    const err = await failure(c.request(`http://127.0.0.1:${port}/ok`, { allowHttp: true }));
    expect(err.reason).toBe('forbidden_address');
    expect((await failure(c.request(`http://[::1]:${port}/ok`, { allowHttp: true }))).reason).toBe('forbidden_address');
    expect((await failure(c.request(`http://[::ffff:7f00:1]:${port}/ok`, { allowHttp: true }))).reason).toBe('forbidden_address');
    expect((await failure(c.request(`http://2130706433:${port}/ok`, { allowHttp: true }))).reason).toBe('forbidden_address');
    expect(seen).toEqual([]);
  });

  it('refuses, at connect time, a name that resolves to loopback', async () => {
    const lookup = vi.fn(loopbackLookup);
    const c = client({ allowLocal: false, lookup });
    const err = await failure(c.request(`http://media.example.test:${port}/ok`, { allowHttp: true }));
    expect(err.reason).toBe('forbidden_address');
    expect(lookup).toHaveBeenCalledWith('media.example.test');
    expect(seen).toEqual([]);
  });

  it('answers the single-address lookup shape too (autoSelectFamily off)', async () => {
    const before = net.getDefaultAutoSelectFamily();
    net.setDefaultAutoSelectFamily(false);
    try {
      const refused = client({ allowLocal: false, lookup: loopbackLookup });
      expect((await failure(refused.request(`http://media.example.test:${port}/ok`, { allowHttp: true }))).reason).toBe('forbidden_address');
      const allowed = client({ allowLocal: true, lookup: loopbackLookup });
      expect((await allowed.request(`http://media.example.test:${port}/ok`)).status).toBe(200);
    } finally {
      net.setDefaultAutoSelectFamily(before);
    }
    expect(seen).toEqual(['/ok']);
  });

  it('guards IP literals in the connector as well, not only in request()', async () => {
    // Defence in depth: reach past request()'s own check straight to the pooled agent.
    const c = client({ allowLocal: false });
    const agent = (c as unknown as { agent: Agent }).agent;
    const err = await agent.request({ origin: `http://127.0.0.1:${port}`, path: '/ok', method: 'GET' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OutboundRequestError);
    expect((err as OutboundRequestError).reason).toBe('forbidden_address');
    expect(seen).toEqual([]);
  });

  it('refuses when any one of the resolved addresses is forbidden', async () => {
    const lookup: HostLookup = async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    const c = client({ allowLocal: false, lookup });
    const err = await failure(c.request(`http://mixed.example.test:${port}/ok`, { allowHttp: true }));
    expect(err.reason).toBe('forbidden_address');
    expect(seen).toEqual([]);
  });

  it('catches DNS rebinding: public at acceptance, loopback at fetch', async () => {
    let calls = 0;
    const rebinding: HostLookup = async () => [{ address: calls++ === 0 ? '93.184.216.34' : '127.0.0.1', family: 4 }];
    const url = await checkCallerUrl(`http://rebind.example.test:${port}/ok`, {
      path: ['image_url'],
      allowHttp: true,
      allowLocal: false,
      lookup: rebinding,
    });
    const c = client({ allowLocal: false, lookup: rebinding });
    expect((await failure(c.fetchMedia(url))).reason).toBe('forbidden_address');
    expect(seen).toEqual([]);
  });

  it('reports a name that does not resolve as a network failure', async () => {
    const lookup: HostLookup = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.invalid'), { code: 'ENOTFOUND' });
    };
    const c = client({ allowLocal: false, lookup });
    const err = await failure(c.request('https://nowhere.invalid/ok'));
    expect(err.reason).toBe('network');
  });

  it('works against loopback when allowLocal is true, through the injected lookup', async () => {
    const lookup = vi.fn(loopbackLookup);
    const c = client({ allowLocal: true, lookup });
    const res = await c.request(`http://media.example.test:${port}/ok`);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe('PNGDATA');
    expect(res.headers['content-type']).toBe('image/png; charset=binary');
    expect(res.headers['x-multi']).toBe('a, b');
    expect(lookup).toHaveBeenCalledWith('media.example.test');
  });

  it('sends method, headers, body and a default user agent', async () => {
    const c = client({ userAgent: 'test-agent/1' });
    const res = await c.request(`http://127.0.0.1:${port}/echo`, {
      method: 'POST',
      headers: { 'x-sig': 'abc', 'content-type': 'application/json' },
      body: '{"hello":1}',
    });
    expect(res.status).toBe(201);
    expect(JSON.parse(res.body.toString())).toEqual({ method: 'POST', ua: 'test-agent/1', sig: 'abc', body: '{"hello":1}' });
    const own = await c.request(`http://127.0.0.1:${port}/echo`, { method: 'POST', headers: { 'User-Agent': 'mine' }, body: Buffer.from('x') });
    expect(JSON.parse(own.body.toString()).ua).toBe('mine');
  });

  it('does not follow redirects: a 3xx comes back as it is', async () => {
    const c = client();
    const res = await c.request(`http://127.0.0.1:${port}/redirect`);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`http://127.0.0.1:${port}/ok`);
    expect(res.body.toString()).toBe('moved');
    expect(seen).toEqual(['/redirect']);
  });

  it('times out a server that never answers', async () => {
    const c = client();
    const err = await failure(c.request(`http://127.0.0.1:${port}/slow-headers`, { timeoutMs: 200 }));
    expect(err.reason).toBe('timeout');
  });

  it('times out a body that never finishes (the cap covers headers and body)', async () => {
    const c = client({ defaultTimeoutMs: 200 });
    const err = await failure(c.request(`http://127.0.0.1:${port}/slow-body`));
    expect(err.reason).toBe('timeout');
  });

  it('refuses a declared oversize body from content-length alone', async () => {
    const c = client();
    const err = await failure(c.request(`http://127.0.0.1:${port}/big-declared`, { maxBytes: 4096 }));
    expect(err.reason).toBe('too_large');
  });

  it('cuts an undeclared oversize body while reading', async () => {
    const c = client({ maxResponseBytes: 10 * 1024 });
    const err = await failure(c.request(`http://127.0.0.1:${port}/big-chunked`));
    expect(err.reason).toBe('too_large');
    // The same body fits under a larger cap.
    const ok = await c.request(`http://127.0.0.1:${port}/big-chunked`, { maxBytes: 64 * 1024 });
    expect(ok.body.length).toBe(64 * 1024);
  });

  it('is https-only unless http is allowed or local targets are', async () => {
    const strict = client({ allowLocal: false, lookup: loopbackLookup });
    expect((await failure(strict.request(`http://media.example.test:${port}/ok`))).reason).toBe('scheme');
    expect((await failure(strict.request('ftp://media.example.test/ok', { allowHttp: true }))).reason).toBe('scheme');
    expect((await failure(strict.request('file:///etc/passwd'))).reason).toBe('scheme');
    expect((await failure(strict.request('not a url'))).reason).toBe('invalid_url');
    expect((await failure(strict.request(`https://u:p@media.example.test/ok`))).reason).toBe('invalid_url');
    expect(seen).toEqual([]);
  });

  describe('fetchMedia', () => {
    it('returns the data and the media type', async () => {
      const c = client();
      await expect(c.fetchMedia(`http://127.0.0.1:${port}/ok`)).resolves.toEqual({
        data: Buffer.from('PNGDATA'),
        contentType: 'image/png',
      });
    });

    it('requires a 2xx', async () => {
      const c = client();
      const missing = await failure(c.fetchMedia(`http://127.0.0.1:${port}/missing`));
      expect(missing.reason).toBe('status');
      expect(missing.status).toBe(404);
      const moved = await failure(c.fetchMedia(`http://127.0.0.1:${port}/redirect`));
      expect(moved.reason).toBe('status');
      expect(moved.status).toBe(302);
      expect(seen).toEqual(['/missing', '/redirect']);
    });
  });
});
