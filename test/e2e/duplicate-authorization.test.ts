/**
 * Two Authorization headers in one request: Node keeps the first, a proxy in front may keep the
 * last, so the two would see different identities. Every door that reads the header (REST /v1 on
 * Express and on the JSON lane, /account, /admin) answers 400 naming it, whichever comes first,
 * and nothing is charged. Two Idempotency-Key headers likewise (Node joined them into one key).
 */
import { ADMIN_TOKEN } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { rawRequest } from '../support/raw-http';
import { allCallsBilled } from '../support/billed';

const gw = useTestGateway();

const CHAT = JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }] });

test('each door refuses a second Authorization header with a 400 naming it; one header still works', async () => {
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct);
  const cases: Array<[string, string, string, string?]> = [
    ['GET', '/v1/models', key.secret],
    ['POST', '/v1/chat/completions', key.secret, CHAT],
    ['GET', '/account', acct.idToken],
    ['GET', `/admin/webhook-deliveries?keyId=${key.id}`, ADMIN_TOKEN],
  ];
  let spent = 0;
  for (const [method, path, valid, body] of cases) {
    const head = (auth: string[]) => [
      `${method} ${path} HTTP/1.1`,
      'Host: x',
      ...auth.map((a) => `Authorization: Bearer ${a}`),
      ...(body ? ['Content-Type: application/json'] : []),
    ];
    const one = await rawRequest(gw.url, head([valid]), body);
    expect([path, one.status]).toEqual([path, 200]);
    spent += Number(one.headers['x-svc-credits'] ?? 0);
    for (const pair of [
      [valid, 'nope'],
      ['nope', valid],
      [valid, valid],
    ]) {
      const two = await rawRequest(gw.url, head(pair), body);
      expect([path, two.status]).toEqual([path, 400]);
      expect(JSON.parse(two.body).error).toEqual({
        type: 'invalid_request_error',
        param: 'Authorization',
        code: 'duplicate_header',
        message: expect.stringContaining("'Authorization' header is given more than once"),
      });
    }
  }
  // The one chat call that ran was charged; the refused ones were not.
  expect(spent).toBeGreaterThan(0);
  await allCallsBilled(gw, acct.id);
  expect(await gw.balance(acct)).toBeCloseTo(10 - spent, 6);
});

test('GraphQL over HTTP refuses a second Authorization header too, in the GraphQL shape', async () => {
  const acct = await gw.newAccount(0);
  const key = await gw.newKey(acct);
  const body = JSON.stringify({ query: '{ models { id } }' });
  const head = (auth: string[]) => ['POST /graphql HTTP/1.1', 'Host: x', ...auth.map((a) => `Authorization: Bearer ${a}`), 'Content-Type: application/json'];
  expect((await rawRequest(gw.url, head([key.secret]), body)).status).toBe(200);
  for (const pair of [
    [key.secret, 'nope'],
    ['nope', key.secret],
    [key.secret, acct.idToken],
  ]) {
    const two = await rawRequest(gw.url, head(pair), body);
    expect(two.status).toBe(400);
    const errors = JSON.parse(two.body).errors;
    expect(errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'Authorization' });
    expect(errors[0].message).toContain("'Authorization' header is given more than once");
  }
});

test('two Idempotency-Key headers are a 400 naming the header, not one key made of both; nothing is charged', async () => {
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct);
  const routes: Array<[string, string]> = [
    ['/v1/chat/completions', CHAT],
    ['/v1/images/generations', JSON.stringify({ model: 'svc-creative-v8', prompt: 'x', size: '64x64' })],
  ];
  for (const [path, body] of routes) {
    const head = [
      'POST ' + path + ' HTTP/1.1',
      'Host: x',
      `Authorization: Bearer ${key.secret}`,
      'Content-Type: application/json',
      'Idempotency-Key: first-one',
      'idempotency-key: second-one',
    ];
    const res = await rawRequest(gw.url, head, body);
    expect([path, res.status]).toEqual([path, 400]);
    expect(JSON.parse(res.body).error).toEqual({
      type: 'invalid_request_error',
      param: 'Idempotency-Key',
      code: 'duplicate_header',
      message: expect.stringContaining("'Idempotency-Key' header is given more than once"),
    });
  }
  await allCallsBilled(gw, acct.id);
  expect(await gw.balance(acct)).toBe(10);
});
