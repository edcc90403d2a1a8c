import { useTestGateway } from '../support/use-test-gateway';

/**
 * Abusive documents are refused before execution with a 400, over HTTP. (How quickly is for the
 * benchmarks; here we check where they are stopped: parsing, the shape bounds, or the cost bound.)
 */
const gw = useTestGateway();
let key: string;
beforeAll(async () => {
  key = (await gw.newKey(await gw.newAccount(10))).secret;
});

const post = (body: unknown, token = key) => gw.api('POST', '/graphql', { token, body });
const messages = (res: { body: any }) => (res.body.errors ?? []).map((e: any) => e.message).join('\n');

test('a 50-level query is refused before validation', async () => {
  const query = `{ ${'models { '.repeat(50)}id${' }'.repeat(50)} }`;
  const res = await post({ query });
  expect(res.status).toBe(400);
  expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  expect(messages(res)).toMatch(/51 levels deep; the limit is 10/);
  expect(res.body.data).toBeUndefined();
});

test('a depth bomb through fragments is measured without expanding it', async () => {
  const fragments = Array.from({ length: 12 }, (_, i) => `fragment F${i} on Model { pricing { video { ...F${i + 1} } } }`).join('\n');
  const res = await post({ query: `{ models { ...F0 } }\n${fragments}\nfragment F12 on VideoPrice { credits }` });
  expect(res.status).toBe(400);
  expect(messages(res)).toMatch(/levels deep/);
});

test('10,000 aliases are refused while parsing, before validation', async () => {
  const query = `{ models { ${Array.from({ length: 10_000 }, (_, i) => `a${i}:id`).join(' ')} } }`;
  expect(query.length).toBeLessThan(100 * 1024);
  const res = await post({ query });
  expect(res.status).toBe(400);
  expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
  expect(messages(res)).toMatch(/3000 tokens/);
});

test('more than 30 aliases are refused before validation', async () => {
  const query = `{ models { ${Array.from({ length: 31 }, (_, i) => `a${i}: id`).join(' ')} } }`;
  const res = await post({ query });
  expect(res.status).toBe(400);
  expect(messages(res)).toMatch(/31 aliases; the limit is 30/);
  const ok = await post({ query: `{ models { ${Array.from({ length: 30 }, (_, i) => `a${i}: id`).join(' ')} } }` });
  expect(ok.status).toBe(200);
});

test('more than 300 fields are refused before the standard rules run', async () => {
  // 151 copies of one field: graphql-js's overlapping-fields check would compare every pair.
  const res = await post({ query: `{ ${Array.from({ length: 151 }, () => 'models { id }').join(' ')} }` });
  expect(res.status).toBe(400);
  expect(res.body.errors).toHaveLength(1);
  expect(messages(res)).toMatch(/selects 302 fields; the limit is 300/);
});

test('a batch of 1,000 operations is refused whole', async () => {
  const res = await post(Array.from({ length: 1000 }, () => ({ query: '{ models { id } }' })));
  expect(res.status).toBe(400);
  expect(res.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  expect(messages(res)).toMatch(/batching/i);
});

test('the cost bound weighs page sizes, with variables', async () => {
  const node = 'edges { cursor node { id queueId model status creditsCharged creditsUsed url reason createdAt updatedAt } }';
  const heavy = `query($n: Int) { a: videoJobs(first: $n) { ${node} } b: videoJobs(first: $n) { ${node} } }`;
  const refused = await post({ query: heavy, variables: { n: 100 } });
  expect(refused.status).toBe(400);
  expect(refused.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  expect(messages(refused)).toMatch(/costs \d+; the limit is 2000/);
  const fine = await post({ query: heavy, variables: { n: 20 } });
  expect(fine.status).toBe(200);
  expect(fine.body.data.a.edges).toEqual([]);
});

test('a body over 100 kB answers 413 in the GraphQL error shape', async () => {
  const res = await post({ query: `{ models { id } }${' '.repeat(110 * 1024)}` });
  expect(res.status).toBe(413);
  expect(res.body.errors[0].extensions.code).toBe('request_too_large');
});

test('malformed JSON is refused in the GraphQL error shape', async () => {
  const bad = await gw.api('POST', '/graphql', { token: key, rawBody: '{"query": ' });
  expect(bad.status).toBe(400);
  expect(bad.body.errors[0].extensions.code).toBe('BAD_REQUEST');
});

test('introspection is on outside production', async () => {
  const res = await post({ query: '{ __schema { queryType { name } subscriptionType { name } } }' });
  expect(res.body.data.__schema).toEqual({ queryType: { name: 'Query' }, subscriptionType: { name: 'Subscription' } });
});

test('variables nested past 64 levels are a 400 naming them, over HTTP and WebSocket (5,000 levels overflowed the stack into a 500)', async () => {
  // Written as text: JSON.stringify itself would overflow on this value.
  const deep = `${'['.repeat(5000)}1${']'.repeat(5000)}`;
  for (const query of ['query { models { id } }', 'mutation { revokeApiKey(id: "key_x") }']) {
    const res = await gw.api('POST', '/graphql', {
      token: key,
      rawBody: `{"query":${JSON.stringify(query)},"variables":{"a":${deep}}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'variables' });
  }
  const WebSocket = (await import('ws')).default;
  const socket = new WebSocket(gw.url.replace('http', 'ws') + '/graphql', 'graphql-transport-ws');
  const frames: any[] = [];
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data));
    frames.push(frame);
    if (frame.type === 'connection_ack')
      socket.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { videoJobsUpdated { id } }","variables":{"a":${deep}}}}`);
    if (frame.type === 'error') socket.close(1000);
  });
  await new Promise((resolve) => socket.on('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${key}` } }));
  expect(await closed).toBe(1000);
  const error = frames.find((f) => f.type === 'error');
  expect(error?.payload?.[0]?.extensions).toMatchObject({ code: 'invalid_request_error', param: 'variables' });
  // The gateway serves on.
  expect((await post({ query: '{ models { id } }' })).status).toBe(200);
});
