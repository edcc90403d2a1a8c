import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

/**
 * A mutation operation selects one root field, over HTTP and WebSocket. Every mutation's result
 * is non-null (CONTRACT), so a document `{ a0: queueVideo a1: queueVideo }` whose second field
 * failed answered `data: null`: the first was charged and its job id never told. Such a document
 * is refused before anything runs.
 */
const gw = useTestGateway();
let wsUrl: string;
const clients: Client[] = [];
beforeAll(async () => {
  wsUrl = `${gw.url.replace(/^http/, 'ws')}/graphql`;
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
});

const TEXT_MODEL = 'svc-2.5-preview-text-to-video';
const REFUSAL = 'A mutation operation may select one field; send each mutation in its own request.';
const queue = (alias: string, prompt: string) =>
  `${alias}: queueVideo(input: { model: "${TEXT_MODEL}", prompt: "${prompt}", duration: "5s", resolution: "480p" }) { id }`;

const http = (query: string, token: string) => gw.api('POST', '/graphql', { token, body: { query } });
const jobs = async (token: string) => (await http('{ videoJobs(first: 10) { edges { node { id } } } }', token)).body.data.videoJobs.edges as unknown[];

function wsResult(token: string, query: string): Promise<{ data?: any; errors?: any[] }> {
  const client = createClient({ url: wsUrl, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { authorization: `Bearer ${token}` } });
  clients.push(client);
  return new Promise((resolve, reject) => {
    let result: { data?: any; errors?: any[] } = {};
    client.subscribe(
      { query },
      {
        next: (r) => void (result = r as typeof result),
        error: (e) => (Array.isArray(e) ? resolve({ errors: e }) : reject(e)),
        complete: () => resolve(result),
      },
    );
  });
}

/** An account whose credits pay for one 5 s 480p video and not two, and a live key of it. */
async function accountForOneVideo(): Promise<{ acct: TestAccount; key: { id: string; secret: string }; price: number }> {
  const probe = await gw.newKey(await gw.newAccount(0));
  const quote = await http(`{ videoQuote(input: { model: "${TEXT_MODEL}", duration: "5s", resolution: "480p" }) { credits } }`, probe.secret);
  const price = quote.body.data.videoQuote.credits as number;
  const acct = await gw.newAccount(price * 1.5);
  return { acct, key: await gw.newKey(acct), price };
}

test('two queueVideo fields over HTTP are refused before either runs: nothing charged, no job', async () => {
  const { acct, key, price } = await accountForOneVideo();
  const res = await http(`mutation { ${queue('a0', 'one')} ${queue('a1', 'two')} }`, key.secret);
  expect(res.status).toBe(400);
  expect(res.body).toEqual({ errors: [{ message: REFUSAL, locations: expect.any(Array), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] });
  expect(await gw.balance(acct)).toBe(price * 1.5);
  expect(await jobs(key.secret)).toEqual([]);

  // One field in its own request is served as before, __typename beside it allowed.
  const one = await http(`mutation { __typename ${queue('a0', 'one')} }`, key.secret);
  expect(one.status).toBe(200);
  expect(one.body.data.a0.id).toEqual(expect.any(String));
  expect(await gw.balance(acct)).toBeCloseTo(price * 0.5, 6);
});

test('fields reached through an inline fragment or a fragment spread count too', async () => {
  const { acct, key, price } = await accountForOneVideo();
  for (const doc of [
    `mutation { ${queue('a0', 'one')} ... on Mutation { ${queue('a1', 'two')} } }`,
    `mutation { ...Two } fragment Two on Mutation { ${queue('a0', 'one')} ${queue('a1', 'two')} }`,
  ]) {
    const res = await http(doc, key.secret);
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.message)).toEqual([REFUSAL]);
  }
  expect(await gw.balance(acct)).toBe(price * 1.5);
  expect(await jobs(key.secret)).toEqual([]);
});

test('two createApiKey fields are refused: no secret is created and lost', async () => {
  const acct = await gw.newAccount(0);
  const before = (await http('{ apiKeys { id } }', acct.idToken)).body.data.apiKeys.length;
  const res = await http('mutation { k1: createApiKey(input: { name: "a" }) { key } k2: createApiKey(input: { name: "b" }) { key } }', acct.idToken);
  expect(res.status).toBe(400);
  expect(res.body.errors[0]).toMatchObject({ message: REFUSAL, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  expect((await http('{ apiKeys { id } }', acct.idToken)).body.data.apiKeys.length).toBe(before);
});

test('over WebSocket the same document is an error before anything runs; one field is served', async () => {
  const { acct, key, price } = await accountForOneVideo();
  const refused = await wsResult(key.secret, `mutation { ${queue('a0', 'one')} ${queue('a1', 'two')} }`);
  expect(refused.data).toBeUndefined();
  expect(refused.errors).toEqual([{ message: REFUSAL, locations: expect.any(Array), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }]);
  expect(await gw.balance(acct)).toBe(price * 1.5);
  expect(await jobs(key.secret)).toEqual([]);

  const one = await wsResult(key.secret, `mutation { ${queue('a0', 'one')} }`);
  expect(one.errors).toBeUndefined();
  expect(one.data.a0.id).toEqual(expect.any(String));
  expect(await jobs(key.secret)).toHaveLength(1);
});
