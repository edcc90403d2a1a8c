import { DomainError } from '../../../src/domain/errors/domain-error';
import { checkCallerUrl, type HostLookup } from '../../../src/infra/http/url-check';

const notFound: HostLookup = async (host) => {
  const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${host}`);
  err.code = 'ENOTFOUND';
  throw err;
};
const resolvesTo =
  (...addresses: string[]): HostLookup =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

const media = { path: ['image_url'], allowHttp: true, allowLocal: false, lookup: notFound };
const webhook = { path: ['url'], allowHttp: false, allowLocal: false, lookup: notFound };
/** Each kind of URL, with the param its refusal names. */
const kinds = [
  [media, 'image_url'],
  [webhook, 'url'],
  [{ ...webhook, allowHttp: true, allowLocal: true }, 'url'],
] as const;

async function refusal(raw: unknown, opts: Parameters<typeof checkCallerUrl>[1]): Promise<DomainError> {
  try {
    await checkCallerUrl(raw, opts);
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    return err as DomainError;
  }
  throw new Error(`expected ${String(raw)} to be refused`);
}

describe('checkCallerUrl', () => {
  it.each([
    ['https://127.0.0.1/a.png', /loopback/],
    ['https://169.254.169.254/latest/meta-data/', /metadata/],
    ['https://[::1]/a.png', /loopback/],
    ['https://10.0.0.1/a.png', /private/],
    ['https://192.168.1.1/a.png', /private/],
    ['https://0.0.0.0/a.png', /unspecified/],
    ['https://[::ffff:127.0.0.1]/a.png', /loopback/],
    ['https://[fd00:ec2::254]/', /metadata/],
    ['http://2130706433/a.png', /loopback/], // WHATWG parsing turns this into 127.0.0.1
    ['http://0x7f.1/a.png', /loopback/],
    ['https://localhost/a.png', /localhost/],
    ['https://LOCALHOST./a.png', /localhost/],
    ['https://api.localhost:8080/a.png', /localhost/],
  ])('refuses %s', async (url, why) => {
    const err = await refusal(url, media);
    expect(err.status).toBe(400);
    expect(err.type).toBe('invalid_request_error');
    expect(err.param).toBe('image_url');
    expect(err.message).toMatch(why);
  });

  it('names the param it was given', async () => {
    const err = await refusal('https://10.0.0.1/x.png', { ...media, path: ['reference_image_urls', 2] });
    expect(err.param).toBe('reference_image_urls[2]');
    expect(err.message).toMatch(/^reference_image_urls\[2\] /);
  });

  it('refuses http when it is not allowed, and other schemes always', async () => {
    expect((await refusal('http://example.com/hook', webhook)).message).toMatch(/https/);
    expect((await refusal('http://example.com/hook', webhook)).param).toBe('url');
    expect((await refusal('ftp://example.com/a.png', media)).message).toMatch(/http or https/);
    expect((await refusal('file:///etc/passwd', media)).param).toBe('image_url');
    expect((await refusal('data:image/png;base64,AAAA', media)).param).toBe('image_url');
    expect((await refusal('javascript:alert(1)', webhook)).param).toBe('url');
  });

  it('refuses credentials in the URL', async () => {
    expect((await refusal('https://user:pass@example.com/a.png', media)).message).toMatch(/username or password/);
    expect((await refusal('https://user@example.com/a.png', media)).message).toMatch(/username or password/);
    expect((await refusal('https://:pw@example.com/a.png', media)).message).toMatch(/username or password/);
  });

  it('refuses non-strings, junk and overlong URLs', async () => {
    for (const raw of [undefined, null, 42, {}, ['https://example.com'], '', '   ']) {
      expect((await refusal(raw, media)).param).toBe('image_url');
    }
    expect((await refusal('not a url', media)).message).toMatch(/valid absolute URL/);
    expect((await refusal('/relative/path.png', media)).message).toMatch(/valid absolute URL/);
    const long = `https://example.com/${'a'.repeat(2048)}`;
    expect((await refusal(long, media)).message).toMatch(/2048/);
  });

  it('refuses a name that resolves to loopback, without echoing the address', async () => {
    const err = await refusal('https://media.example.test/a.png', { ...media, lookup: resolvesTo('127.0.0.1') });
    expect(err.param).toBe('image_url');
    expect(err.message).toMatch(/resolves to a loopback address/);
    expect(err.message).not.toContain('127.0.0.1');
  });

  it('refuses a name when ANY resolved address is forbidden', async () => {
    const lookup = resolvesTo('93.184.216.34', '2606:2800:220:1::1', '10.1.2.3');
    expect((await refusal('https://mixed.example.test/', { ...media, lookup })).message).toMatch(/private/);
    const v6 = resolvesTo('93.184.216.34', '::ffff:169.254.169.254');
    expect((await refusal('https://mixed.example.test/', { ...media, lookup: v6 })).message).toMatch(/metadata/);
  });

  it('accepts a public IP literal without resolving anything', async () => {
    const lookup = vi.fn(notFound);
    await expect(checkCallerUrl('https://93.184.216.34/a.png', { ...media, lookup })).resolves.toBe('https://93.184.216.34/a.png');
    expect(lookup).not.toHaveBeenCalled();
  });

  it('accepts a name that resolves to public addresses', async () => {
    const lookup = vi.fn(resolvesTo('93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'));
    await expect(checkCallerUrl('https://Media.Example.com/a.png', { ...media, lookup })).resolves.toBe('https://media.example.com/a.png');
    expect(lookup).toHaveBeenCalledWith('media.example.com');
  });

  it('accepts a name that cannot be resolved (the machine may be offline)', async () => {
    await expect(checkCallerUrl('https://nowhere.invalid/a.png', media)).resolves.toBe('https://nowhere.invalid/a.png');
    const eagain: HostLookup = async () => {
      throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
    };
    await expect(checkCallerUrl('https://flaky.example.test/', { ...media, lookup: eagain })).resolves.toBe('https://flaky.example.test/');
    await expect(checkCallerUrl('https://empty.example.test/', { ...media, lookup: resolvesTo() })).resolves.toBe('https://empty.example.test/');
  });

  it('accepts when resolution is slower than the lookup timeout', async () => {
    // The lookup never answers: only the lookup timeout lets the check answer.
    const hang: HostLookup = () => new Promise(() => undefined);
    await expect(checkCallerUrl('https://slow.example.test/', { ...media, lookup: hang, lookupTimeoutMs: 50 })).resolves.toBe('https://slow.example.test/');
  });

  it('accepts http for media when allowed', async () => {
    await expect(checkCallerUrl('http://93.184.216.34/a.png', media)).resolves.toBe('http://93.184.216.34/a.png');
  });

  it('with allowLocal, accepts local targets (and skips DNS)', async () => {
    const lookup = vi.fn(resolvesTo('127.0.0.1'));
    const local = { path: ['url'], allowHttp: true, allowLocal: true, lookup };
    await expect(checkCallerUrl('http://127.0.0.1:3000/hook', local)).resolves.toBe('http://127.0.0.1:3000/hook');
    await expect(checkCallerUrl('http://localhost:3000/hook', local)).resolves.toBe('http://localhost:3000/hook');
    await expect(checkCallerUrl('https://intranet.test/hook', local)).resolves.toBe('https://intranet.test/hook');
    expect(lookup).not.toHaveBeenCalled();
    // Credentials are still refused.
    expect((await refusal('http://a:b@127.0.0.1/', local)).param).toBe('url');
  });
});

describe('checkCallerUrl: what is sent is what is stored', () => {
  it.each([
    ['https://example.com/x\r\nX-Injected: 1'],
    ['https://exa\tmple.com/x'],
    ['https://example.com/a b'],
    [' https://example.com/x'],
    ['https://example.com/x\u0000'],
    ['https://example.com/x\u007f'],
    ['https://example.com/x\u00a0'],
    ['https://example.com/x\u2028'],
  ])('refuses %j: control characters and whitespace, which the URL parser drops or trims', async (raw) => {
    for (const [opts, param] of kinds) {
      const err = await refusal(raw, opts);
      expect([err.status, err.param]).toEqual([400, param]);
      expect(err.message).toMatch(/control characters or whitespace/);
    }
  });

  it.each([
    ['https://example.com\\@127.0.0.1/a.png'],
    ['https://example.com\\@169.254.169.254/latest/meta-data/'],
    ['https://example.com\\x.png'],
    ['https://example.com/a\\b.png'],
    ['https:\\\\example.com/x.png'],
  ])('refuses %j: a backslash, a slash to this parser and part of the user info to others (the host would differ)', async (raw) => {
    for (const [opts, param] of kinds) {
      const err = await refusal(raw, opts);
      expect([err.status, err.param]).toEqual([400, param]);
      expect(err.message).toMatch(/backslash/);
    }
    // Percent-encoded, it is an ordinary character of the path.
    await expect(checkCallerUrl('https://example.com/a%5Cb.png', media)).resolves.toBe('https://example.com/a%5Cb.png');
  });

  it('refuses port 0, also where local addresses are allowed', async () => {
    for (const [opts, param] of kinds) {
      const err = await refusal('https://example.com:0/x', opts);
      expect([err.param, err.message]).toEqual([param, `${param} must not use port 0.`]);
    }
    await expect(checkCallerUrl('https://example.com:8443/x', webhook)).resolves.toBe('https://example.com:8443/x');
    await expect(checkCallerUrl('https://example.com/a%20b', webhook)).resolves.toBe('https://example.com/a%20b');
  });
});

describe('names that only mean something inside a network (refused though they do not resolve here)', () => {
  test.each([
    'http://metadata/computeMetadata/v1/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://host.docker.internal/',
    'http://kubernetes.default.svc/',
    'http://api.default.svc.cluster.local/',
    'http://localhost.localdomain/',
    'http://printer.local/',
    'http://nas.home.arpa/',
    'http://127.0.0.1.nip.io/',
    'http://10-0-0-1.sslip.io/x',
    'http://app.169.254.169.254.nip.io/',
    // The same services' hex and IPv6 spellings, refused like the dotted ones.
    'http://7f000001.nip.io/a',
    'http://app-7f000001.nip.io/a',
    'http://a9fea9fe.nip.io/latest/meta-data',
    'http://0a000001.sslip.io/',
    'http://--1.sslip.io/a',
    'http://fe80--1.sslip.io/',
    'http://fd00-ec2--254.sslip.io/',
  ])('%s', async (url) => {
    await expect(checkCallerUrl(url, media)).rejects.toMatchObject({ type: 'invalid_request_error', param: 'image_url' });
  });

  test.each([
    'https://example.com/cat.png',
    'https://cdn.example.org/a.png',
    'https://8.8.8.8.nip.io/x',
    'https://img-2024.example.net/x',
    // Hex and dashes that spell public addresses, or none at all.
    'https://08080808.nip.io/x',
    'https://cafebabe.example.com/x',
    'https://my--site.example.com/x',
    'https://2a01-4f8-c17-b8f--2.sslip.io/x',
  ])('%s passes', async (url) => {
    await expect(checkCallerUrl(url, media)).resolves.toBe(new URL(url).href);
  });
});
