/**
 * Inputs held to one spelling: /admin refuses an unknown query parameter as /account does (a
 * misspelt filter listed every delivery); an integer in a query string is plain decimal digits
 * (`0x10`, ` 1`, `1e1`, `04` were read as numbers); a charset other than UTF-8 is the 400
 * `invalid_encoding` a UTF-16 body gets (it had no code); a 1 MB JSON route refuses a declared
 * Content-Length over its limit before reading the body, with `Connection: close`.
 */
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { rawRequest } from '../support/raw-http';

const gw = useTestGateway();
let acct: TestAccount;
let key: { id: string; secret: string };
beforeAll(async () => {
  acct = await gw.newAccount(20);
  key = await gw.newKey(acct);
});

test('/admin/webhook-deliveries: an unknown query parameter is a 400 naming it; the known ones still filter', async () => {
  const bad = await gw.api('GET', `/admin/webhook-deliveries?keyid=${key.id}`, { token: ADMIN_TOKEN });
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param: 'keyid' });
  const good = await gw.api('GET', `/admin/webhook-deliveries?keyId=${key.id}&jobId=vid_x`, { token: ADMIN_TOKEN });
  expect([good.status, good.body.object]).toEqual([200, 'list']);
});

test.each([['0x10'], ['%201'], ['1e1'], ['04'], ['+5'], ['1.0'], ['']])('ledger-entries?first=%s is a 400 naming first', async (first) => {
  const res = await gw.api('GET', `/account/ledger-entries?first=${first}`, { token: acct.idToken });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'first', message: expect.stringContaining('plain decimal digits') });
});

test('plain digits still page, and deliveries take the same rule for limit', async () => {
  const page = await gw.api('GET', '/account/ledger-entries?first=1', { token: acct.idToken });
  expect([page.status, page.body.data.length]).toEqual([200, 1]);
  const bad = await gw.api('GET', `/account/api-keys/${key.id}/webhook/deliveries?limit=0x10`, { token: acct.idToken });
  expect([bad.status, bad.body.error.param]).toEqual([400, 'limit']);
  expect((await gw.api('GET', `/account/api-keys/${key.id}/webhook/deliveries?limit=10`, { token: acct.idToken })).status).toBe(200);
});

test.each([['utf8'], ['us-ascii'], ['iso-8859-1'], ['utf-16']])('charset=%s is a 400 invalid_encoding, nothing charged', async (charset) => {
  const body = JSON.stringify({ model: 'svc-creative-v8', prompt: 'x', size: '64x64' });
  const res = await gw.api('POST', '/v1/images/generations', {
    token: key.secret,
    rawBody: body,
    headers: { 'content-type': `application/json; charset=${charset}` },
  });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_encoding' });
  expect(await gw.balance(acct)).toBe(20);
});

test('a declared Content-Length over 1 MB on a 1 MB route is a 413 at once, the connection closed', async () => {
  const res = await rawRequest(gw.url, [
    'POST /v1/video/quote HTTP/1.1',
    'Host: x',
    `Authorization: Bearer ${key.secret}`,
    'Content-Type: application/json',
    `Content-Length: ${2 * 1024 * 1024}`,
  ]);
  expect(res.status).toBe(413);
  expect(res.headers.connection).toBe('close');
  expect(JSON.parse(res.body).error).toMatchObject({ type: 'request_too_large' });
});
