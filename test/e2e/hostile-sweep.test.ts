/**
 * Every field of every body, swept with hostile values: for each REST endpoint that takes JSON
 * (the /v1 calls, the account and operator endpoints) and each GraphQL variable, a valid request,
 * then the same with one field missing, or replaced by each of HOSTILE (wrong types, extremes,
 * unstorable text, injection and SSRF strings, deep nesting), or with an unknown field; plus
 * broken raw JSON and hostile ids and query strings. What a client must never see: a 5xx, an
 * error body that is not OpenAI's shape (REST), an internal detail (a stack, `internal_error`),
 * a GraphQL internal error. Live-key calls are made on an account of their own, whose balance
 * must equal its ledger afterwards; the test key's calls are free.
 */
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

vi.setConfig({ testTimeout: 120_000 });

const deep = (levels: number): unknown => Array.from({ length: levels }).reduce<unknown>((inner) => [inner], []);
const HOSTILE: unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  2 ** 53 + 1,
  '',
  ' ',
  'x'.repeat(100_000),
  '\u0000',
  '\ud800',
  'é😀',
  '1',
  'true',
  '-1',
  [],
  [null],
  [1, 2],
  [{}],
  {},
  { a: 1 },
  JSON.parse('{"__proto__":{"x":1}}'),
  { constructor: 1 },
  '../../etc/passwd',
  'http://169.254.169.254/latest',
  'file:///etc/passwd',
  "' or 1=1 --",
  '${7*7}',
  '<script>alert(1)</script>',
  deep(50),
];
const BROKEN_JSON = ['', 'null', '[]', '"x"', '{', '{"model":', '1e999', `{"a":${'['.repeat(10_000)}${']'.repeat(10_000)}}`];

/** The valid body, then each field missing, each replaced by every hostile value (in the first element of an array of objects too), and an unknown field. */
function* variants(valid: Record<string, unknown>): Generator<Record<string, unknown>> {
  yield valid;
  for (const field of Object.keys(valid)) {
    const { [field]: _dropped, ...rest } = valid;
    yield rest;
    for (const h of HOSTILE) yield { ...valid, [field]: h };
    const value = valid[field];
    if (Array.isArray(value) && value[0] !== null && typeof value[0] === 'object') {
      for (const inner of Object.keys(value[0] as object)) for (const h of HOSTILE) yield { ...valid, [field]: [{ ...(value[0] as object), [inner]: h }] };
    }
  }
  yield { ...valid, unknown_field: 'x' };
}

const VIDEO = { model: 'svc-2.5-preview-text-to-video', prompt: 'a cat', resolution: '480p', duration: '5s' };
const V1_BODIES: Array<[string, Record<string, unknown>]> = [
  [
    '/v1/chat/completions',
    {
      model: 'svc-chat-1',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 5,
      temperature: 1,
      n: 1,
      stream: false,
      seed: 1,
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
      response_format: { type: 'text' },
      stop: ['x'],
      logit_bias: { 1: 1 },
      user: 'u',
    },
  ],
  ['/v1/responses', { model: 'svc-chat-1', input: 'hi', max_output_tokens: 16, instructions: 'be brief', text: { format: { type: 'text' } }, store: true }],
  [
    '/v1/responses/input_tokens',
    { model: 'svc-chat-1', input: 'hi', instructions: 'be brief', tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }] },
  ],
  [
    '/v1/images/generations',
    { model: 'svc-creative-v8', prompt: 'a cat', n: 1, size: '256x256', response_format: 'b64_json', seed: 1, negative_prompt: 'dog', style_preset: 'x' },
  ],
  ['/v1/video/quote', VIDEO],
  ['/v1/video/queue', VIDEO],
  [
    '/v1/video/motion-control',
    {
      image_url: 'https://example.com/a.png',
      video_url: 'https://example.com/a.mp4',
      duration_seconds: 3,
      prompt: 'x',
      keep_original_sound: true,
      character_orientation: 'image',
    },
  ],
  ['/v1/video/retrieve', { id: 'vid_doesnotexist' }],
];

const gw = useTestGateway();
let testKey: string;
let liveAccount: TestAccount;
let liveKey: string;
let owner: TestAccount;
const problems: unknown[] = [];

beforeAll(async () => {
  owner = await gw.newAccount(0);
  testKey = (await gw.newKey(owner, { mode: 'test' })).secret;
  liveAccount = await gw.newAccount(100);
  liveKey = (await gw.newKey(liveAccount)).secret;
});

/** Sends one request and notes what a client must never get. */
async function probe(method: string, path: string, opts: { token?: string; body?: unknown; rawBody?: string }) {
  const headers: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  let init: RequestInit = { method, headers };
  if (opts.rawBody !== undefined || opts.body !== undefined) {
    init = { method, headers: { ...headers, 'content-type': 'application/json' }, body: opts.rawBody ?? JSON.stringify(opts.body) };
  }
  const res = await fetch(`${gw.url}${path}`, init);
  const text = await res.text();
  const note = (problem: string) =>
    problems.push({
      method,
      path,
      status: res.status,
      problem,
      sent: (opts.rawBody ?? JSON.stringify(opts.body) ?? '').slice(0, 160),
      answer: text.slice(0, 240),
    });
  if (res.status >= 500 && res.status !== 503) note('5xx');
  if (/internal_error|node_modules|\bat \w[\w.]* \(|TypeError|ReferenceError/.test(text)) note('internal detail');
  if (path === '/graphql') {
    // Schema hints ("Did you mean …") are a development gateway's help, stripped in production (graphql-production.test.ts).
    if (/INTERNAL_SERVER_ERROR/.test(text)) note('internal error');
    return;
  }
  if (res.status >= 400) {
    let body: { error?: { message?: unknown; type?: unknown } } | undefined;
    try {
      body = JSON.parse(text);
    } catch {
      return note('error body is not JSON');
    }
    if (typeof body?.error?.message !== 'string' || typeof body.error.type !== 'string') note('error body without the OpenAI shape');
  }
}

test('the /v1 bodies: no 5xx, every error in the OpenAI shape, nothing internal', async () => {
  for (const [path, valid] of V1_BODIES) {
    for (const body of variants(valid)) await probe('POST', path, { token: testKey, body });
    // The first forty as a live key too: the billed path.
    let n = 0;
    for (const body of variants(valid)) {
      if (n++ >= 40) break;
      await probe('POST', path, { token: liveKey, body });
    }
    for (const rawBody of BROKEN_JSON) await probe('POST', path, { token: testKey, rawBody });
  }
  expect(problems).toEqual([]);
});

test('the account and operator bodies, ids and query strings', async () => {
  const key = await gw.newKey(owner, { name: 'swept', mode: 'test' });
  const token = owner.idToken;
  for (const body of variants({ name: 'k', mode: 'test', allowed_models: ['svc-chat-1'], blocked_models: [], daily_spend_cap: 5 }))
    await probe('POST', '/account/api-keys', { token, body });
  for (const body of variants({ name: 'k2', allowed_models: ['svc-chat-1'], blocked_models: [], daily_spend_cap: 5 }))
    await probe('PATCH', `/account/api-keys/${key.id}`, { token, body });
  for (const body of variants({ url: 'https://example.com/hook', events: ['video.completed'] }))
    await probe('PATCH', `/account/api-keys/${key.id}/webhook`, { token, body });
  for (const query of [
    'limit=-1',
    'limit=1e9',
    'limit=abc',
    'cursor=%00',
    `cursor=${'x'.repeat(5000)}`,
    'from=2020-13-45',
    'to=zzz',
    'limit=1&limit=2',
    'cursor[]=1',
  ]) {
    await probe('GET', `/account/usage?${query}`, { token });
    await probe('GET', `/account/ledger-entries?${query}`, { token });
    await probe('GET', `/v1/responses/resp_x/input_items?${query}`, { token: testKey });
    await probe('GET', `/account/api-keys/${key.id}/webhook/deliveries?${query}`, { token });
  }
  for (const id of ['%00', '%ud800', 'x'.repeat(3000), '..%2F..', '1%20or%201=1']) {
    await probe('GET', `/v1/models/${id}`, { token: testKey });
    await probe('GET', `/v1/responses/${id}`, { token: testKey });
    await probe('DELETE', `/v1/responses/${id}`, { token: testKey });
    await probe('GET', `/v1/responses/${id}/input_items`, { token: testKey });
    await probe('POST', `/v1/responses/${id}/cancel`, { token: testKey });
    await probe('PATCH', `/account/api-keys/${id}`, { token, body: { name: 'x' } });
    await probe('DELETE', `/account/api-keys/${id}`, { token });
    await probe('GET', `/media/${id}/${id}`, {});
  }
  for (const body of variants({ credits: 5, reason: 'swept' })) await probe('POST', `/admin/accounts/${owner.id}/credits`, { token: ADMIN_TOKEN, body });
  expect(problems).toEqual([]);
});

test('GraphQL variables and documents', async () => {
  const gql = (query: string, variables: unknown) => probe('POST', '/graphql', { token: testKey, body: { query, variables } });
  const queue = `mutation($input: QueueVideoInput!) { queueVideo(input: $input) { id status } }`;
  for (const input of variants({ model: VIDEO.model, prompt: 'x', duration: '5s', resolution: '480p' })) await gql(queue, { input });
  for (const id of HOSTILE) await gql(`query($id: ID!) { videoJob(id: $id) { id } }`, { id });
  for (const first of HOSTILE) await gql(`query($n: Int) { videoJobs(first: $n) { edges { node { id } } } }`, { n: first });
  for (const doc of ['{', 'query { __schema { types { name } } }', 'query { nope }', '{ videoJobs { edges { node { idd } } } }', 'x'.repeat(200_000)])
    await gql(doc, {});
  expect(problems).toEqual([]);
});
