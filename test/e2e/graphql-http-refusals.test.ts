import { useTestGateway } from '../support/use-test-gateway';

/**
 * Requests /graphql refuses at the HTTP level answer in the GraphQL error shape
 * (`{ errors: [{ message, extensions: { code } }] }`), in our words (none names the library
 * that serves them), with their statuses; a missing credential is a 401 as a bad one is.
 */
const gw = useTestGateway();
let key: { id: string; secret: string };
beforeAll(async () => {
  key = await gw.newKey(await gw.newAccount(10));
});

const auth = () => ({ authorization: `Bearer ${key.secret}` });

async function send(method: string, path: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(`${gw.url}${path}`, { method, headers, body });
  const text = await res.text();
  // No library name, in any answer.
  expect(text).not.toMatch(/apollo|graphql-js|express/i);
  return { status: res.status, headers: res.headers, body: JSON.parse(text) };
}

test('a method other than GET and POST: 405 with Allow, our words', async () => {
  const res = await send('PATCH', '/graphql', { ...auth(), 'content-type': 'application/json' }, JSON.stringify({ query: '{ models { id } }' }));
  expect(res.status).toBe(405);
  expect(res.headers.get('allow')).toBe('GET, POST');
  expect(res.body).toEqual({ errors: [{ message: '/graphql takes GET (queries only) and POST requests.', extensions: { code: 'BAD_REQUEST' } }] });
});

test('a GET without a header that forces a preflight: 400 as a possible cross-site request', async () => {
  const res = await send('GET', `/graphql?query=${encodeURIComponent('{ models { id } }')}`, {});
  expect(res.status).toBe(400);
  expect(res.body.errors).toEqual([{ message: expect.stringMatching(/cross-site request.*Authorization header/), extensions: { code: 'BAD_REQUEST' } }]);
});

test('a batch, and a POST without a JSON object: 400 in our words', async () => {
  const batch = await send('POST', '/graphql', { ...auth(), 'content-type': 'application/json' }, JSON.stringify([{ query: '{ models { id } }' }]));
  expect(batch.status).toBe(400);
  expect(batch.body.errors).toEqual([{ message: 'Batching is not supported: send one operation per request.', extensions: { code: 'BAD_REQUEST' } }]);
  for (const [type, body] of [
    ['application/json', '{}'],
    ['text/plain', '{ models { id } }'],
  ]) {
    const res = await send('POST', '/graphql', { ...auth(), 'content-type': type }, body);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { message: 'A POST to /graphql needs Content-Type: application/json and a JSON object with a query.', extensions: { code: 'BAD_REQUEST' } },
    ]);
  }
});

test('a query parameter given twice is refused in the GraphQL shape, naming it', async () => {
  const res = await send('GET', `/graphql?query=${encodeURIComponent('{ models { id } }')}&query=x`, auth());
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ errors: [{ message: expect.stringMatching(/'query'/), extensions: { code: 'invalid_request_error', param: 'query' } }] });
});

test('no credential is a 401 authentication_error before any resolver, as a bad one is', async () => {
  for (const query of ['{ models { id } }', '{ account { id } }', 'mutation { createApiKey(input: {}) { key } }', '{ __typename videoJob(id: "x") { id } }']) {
    const none = await send('POST', '/graphql', { 'content-type': 'application/json' }, JSON.stringify({ query }));
    expect(none.status).toBe(401);
    expect(none.body).toEqual({
      errors: [{ message: expect.stringMatching(/needs credentials/), extensions: { code: 'authentication_error', reason: 'invalid_api_key' } }],
    });
  }
  const bad = await send(
    'POST',
    '/graphql',
    { 'content-type': 'application/json', authorization: 'Bearer svc_live_unknown_0123456789' },
    JSON.stringify({ query: '{ models { id } }' }),
  );
  expect(bad.status).toBe(401);
  expect(bad.body.errors[0].extensions.code).toBe('authentication_error');
});

test('reading the schema needs no credential (outside production, where introspection is on)', async () => {
  const typename = await send('POST', '/graphql', { 'content-type': 'application/json' }, JSON.stringify({ query: '{ __typename }' }));
  expect(typename.status).toBe(200);
  expect(typename.body).toEqual({ data: { __typename: 'Query' } });
  const schema = await send('POST', '/graphql', { 'content-type': 'application/json' }, JSON.stringify({ query: '{ __schema { queryType { name } } }' }));
  expect(schema.status).toBe(200);
  expect(schema.body.data.__schema.queryType.name).toBe('Query');
});

// What real GraphQL clients send and expect (Apollo Client 4, graphql-sse, a browser's preflight).
test('refusals made before Apollo answer in the media type the client asked for: Apollo Client 4 reads a 4xx only as application/graphql-response+json', async () => {
  const accept = 'application/graphql-response+json, application/json;q=0.9';
  const aliases = `{ ${Array.from({ length: 40 }, (_, i) => `a${i}: models { id }`).join(' ')} }`;
  for (const [body, status] of [
    [JSON.stringify({ query: aliases }), 400],
    ['{"query": ', 400],
    [JSON.stringify({ query: '{ models { id } }', variables: { big: 'x'.repeat(200_000) } }), 413],
  ] as const) {
    const res = await fetch(`${gw.url}/graphql`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json', accept }, body });
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toBe('application/graphql-response+json; charset=utf-8');
    expect(((await res.json()) as { errors: Array<{ extensions: { code: string } }> }).errors[0].extensions.code).toEqual(expect.any(String));
    // A client that asks for plain JSON (or nothing) gets plain JSON, as before.
    const plain = await fetch(`${gw.url}/graphql`, { method: 'POST', headers: { ...auth(), 'content-type': 'application/json' }, body });
    expect(plain.headers.get('content-type')).toBe('application/json; charset=utf-8');
  }
});

test('a subscription asked for as server-sent events is refused in words that say where subscriptions are', async () => {
  const res = await send(
    'POST',
    '/graphql',
    { ...auth(), 'content-type': 'application/json', accept: 'text/event-stream' },
    JSON.stringify({ query: 'subscription { videoJobsUpdated { id } }' }),
  );
  expect(res.status).toBe(406);
  expect(res.body.errors[0].message).toMatch(/subscriptions are served over WebSocket \(graphql-transport-ws\) at \/graphql/);
});

test('a CORS preflight is a 204 naming the methods, and allows no other origin', async () => {
  const res = await fetch(`${gw.url}/graphql`, {
    method: 'OPTIONS',
    headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
  });
  expect(res.status).toBe(204);
  expect(res.headers.get('allow')).toBe('GET, POST');
  expect(res.headers.get('access-control-allow-origin')).toBeNull();
});
