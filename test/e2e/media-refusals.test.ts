/**
 * Media refusals in the shape of every other: a Range past the end of a stored file is a 416 with
 * a Content-Range that gives the size, and the OpenAI error body; an id with a NUL or a broken
 * escape answers the code its route gives any unknown id (`media_not_found`, `key_not_found`,
 * `response_not_found`), not a generic `not_found`.
 */
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();
let acct: TestAccount;
let secret: string;
beforeAll(async () => {
  acct = await gw.newAccount(0);
  secret = (await gw.newKey(acct, { mode: 'test' })).secret;
});

test('a Range past the end: 416, Content-Range bytes */size, an OpenAI error body', async () => {
  const made = await gw.api('POST', '/v1/images/generations', { token: secret, body: { model: 'svc-creative-v8', prompt: 'a range', size: '64x64' } });
  const url = made.body.data[0].url as string;
  const size = (await (await fetch(url)).arrayBuffer()).byteLength;
  for (const range of ['bytes=99999-', `bytes=${size}-`, 'bytes=-0']) {
    const res = await fetch(url, { headers: { range } });
    expect([range, res.status, res.headers.get('content-range')]).toEqual([range, 416, `bytes */${size}`]);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBeNull();
    expect(((await res.json()) as { error: unknown }).error).toEqual({
      type: 'invalid_request_error',
      code: 'range_not_satisfiable',
      param: 'Range',
      message: expect.stringContaining(`${size} bytes`),
    });
  }
  expect((await fetch(url, { headers: { range: 'bytes=0-3' } })).status).toBe(206);
  const huge = await fetch(url, { headers: { range: `bytes=${'9'.repeat(20)}-` } });
  expect(huge.status).toBe(416);
});

test('Range headers RFC 9110 says to ignore get the whole file; a last position past the end is the end', async () => {
  const made = await gw.api('POST', '/v1/images/generations', { token: secret, body: { model: 'svc-creative-v8', prompt: 'ranges', size: '64x64' } });
  const url = made.body.data[0].url as string;
  const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
  for (const range of ['bytes=5-1', 'bytes=0-1,4-5', 'items=0-1', 'bytes=-', 'bytes=x-1']) {
    const res = await fetch(url, { headers: { range } });
    expect([range, res.status]).toEqual([range, 200]);
    expect(Buffer.from(await res.arrayBuffer()).equals(whole)).toBe(true);
  }
  for (const range of [`bytes=0-${'9'.repeat(20)}`, `bytes=0-${whole.length}`, `bytes=-${'9'.repeat(20)}`]) {
    const res = await fetch(url, { headers: { range } });
    expect([range, res.status, res.headers.get('content-range')]).toEqual([range, 206, `bytes 0-${whole.length - 1}/${whole.length}`]);
    expect(Buffer.from(await res.arrayBuffer()).equals(whole)).toBe(true);
  }
});

test.each([
  ['GET', '/media/med_%00/x.png', 'media_not_found', null],
  ['GET', '/media/%ED%A0%80/x.png', 'media_not_found', null],
  ['GET', '/media/med_abc/%00.png', 'media_not_found', null],
  ['DELETE', '/account/api-keys/svc_live_%00', 'key_not_found', 'id'],
  ['PATCH', '/account/api-keys/%ED%A0%80/webhook', 'key_not_found', 'id'],
  ['GET', '/v1/responses/%ED%A0%80', 'response_not_found', 'response_id'],
])('%s %s: 404 %s', async (method, path, code, param) => {
  const token = path.startsWith('/account') ? acct.idToken : secret;
  const res = await gw.api(method, path, { token, ...(method === 'PATCH' ? { body: { url: null } } : {}) });
  expect(res.status).toBe(404);
  expect(res.body.error).toMatchObject({ type: 'not_found_error', code, param });
  // The same route's answer to an id that merely does not exist.
  const plain = await gw.api(method, path.replace(/%00|%ED%A0%80/, 'nothere'), { token, ...(method === 'PATCH' ? { body: { url: null } } : {}) });
  expect([plain.status, plain.body.error.code, plain.body.error.param]).toEqual([404, code, param]);
});
