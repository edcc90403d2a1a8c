/**
 * Text the database cannot store — a NUL character, an unpaired UTF-16 surrogate, a path that
 * is not UTF-8 — in any field of either door: a 400 invalid_request_error naming the field (a
 * 404 for an id in a path), never a 500 or internal_error, and nothing charged.
 */
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

let acct: TestAccount;
let key: { id: string; secret: string };

// Registered before the gateway's fixture, so it reads the balance before the gateway closes.
afterAll(async () => {
  expect(await gw.balance(acct)).toBe(50);
});
const gw = useTestGateway();
beforeAll(async () => {
  acct = await gw.newAccount(50);
  key = await gw.newKey(acct);
});

const BAD = { nul: 'before\u0000after', 'lone high surrogate': 'a\uD83Db', 'lone low surrogate': '\uDE00z' };

describe.each(Object.entries(BAD))('%s', (_name, bad) => {
  test.each([
    ['chat content', '/v1/chat/completions', () => ({ model: 'svc-chat-1', messages: [{ role: 'user', content: bad }] }), 'messages[0].content'],
    [
      'chat content part',
      '/v1/chat/completions',
      () => ({ model: 'svc-chat-1', messages: [{ role: 'user', content: [{ type: 'text', text: bad }] }] }),
      'messages[0].content[0].text',
    ],
    ['responses input', '/v1/responses', () => ({ model: 'svc-chat-1', input: bad }), 'input'],
    ['image prompt', '/v1/images/generations', () => ({ model: 'svc-creative-v8', prompt: bad, size: '64x64' }), 'prompt'],
    ['video prompt', '/v1/video/queue', () => ({ model: 'svc-2.5-preview-text-to-video', prompt: bad }), 'prompt'],
    ['video id', '/v1/video/retrieve', () => ({ id: bad }), 'id'],
  ])('REST %s: 400 naming the field', async (_label, path, body, param) => {
    const res = await gw.api('POST', path, { token: key.secret, body: body() });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
  });

  test('account endpoints: a key name and a webhook URL', async () => {
    const created = await gw.api('POST', '/account/api-keys', { token: acct.idToken, body: { name: bad } });
    expect([created.status, created.body.error?.param]).toEqual([400, 'name']);
    const hook = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url: `https://example.com/${bad}` } });
    expect([hook.status, hook.body.error?.type]).toEqual([400, 'invalid_request_error']);
  });

  test('GraphQL arguments, as variables and as literals, over HTTP', async () => {
    const viaVariables = await gw.api('POST', '/graphql', {
      token: key.secret,
      body: {
        query: 'mutation($input: QueueVideoInput!) { queueVideo(input: $input) { id } }',
        variables: { input: { model: 'svc-2.5-preview-text-to-video', prompt: bad } },
      },
    });
    expect(viaVariables.status).toBe(400);
    expect(viaVariables.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'input.prompt' });
    const literal = JSON.stringify(bad).replace(/\\u0000/g, '\\u0000');
    const viaLiteral = await gw.api('POST', '/graphql', { token: key.secret, body: { query: `{ videoJob(id: ${literal}) { id } }` } });
    expect(viaLiteral.status).toBe(400);
    expect(JSON.stringify(viaLiteral.body)).not.toContain('internal_error');
  });
});

test('ids in paths that cannot exist are 404; a query parameter is a 400 naming it', async () => {
  for (const path of ['/v1/responses/abc%00def', '/v1/responses/%ED%A0%80', '/v1/responses/%E0%A4%A']) {
    const res = await gw.api('GET', path, { token: key.secret });
    expect([path, res.status]).toEqual([path, 404]);
  }
  const del = await gw.api('DELETE', '/account/api-keys/svc_live_%00', { token: acct.idToken });
  expect(del.status).toBe(404);
  const usage = await gw.api('GET', '/account/usage?from=2026-01-01%00', { token: acct.idToken });
  expect([usage.status, usage.body.error?.param]).toEqual([400, 'from']);
});

test('a subscription argument over WebSocket is refused the same way', async () => {
  const client = createClient({
    url: gw.url.replace('http', 'ws') + '/graphql',
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${key.secret}` },
  });
  const errors = await new Promise<any[]>((resolve) => {
    client.subscribe(
      { query: 'subscription($id: ID!) { videoJobUpdated(id: $id) { id } }', variables: { id: 'vid_\u0000' } },
      { next: () => undefined, error: (e) => resolve(e as any[]), complete: () => resolve([]) },
    );
  });
  await client.dispose();
  expect(errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'id' });
});
