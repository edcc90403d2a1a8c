/**
 * Upstream routes against fake upstreams on real sockets that fail on command: a call whose
 * first route refuses, resets, answers 500 or 429, or stalls before its first byte is answered by
 * the next route, charged once at the model's price; a client's fault is passed on at once; a
 * stream that has begun is never retried; a failing route opens its circuit and is passed by,
 * every route open is a 503 without a call; a video submission fails over when refused, not when
 * its answer was lost, and is polled where it was accepted; an image model fails over to a
 * Replicate route; the openai SDK with its default retries sends one request. After each, the
 * balance, the ledger and `x-svc-credits` agree.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { PNG } from 'pngjs';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';
import { startFakeOpenAIUpstream, type FakeOpenAIMode, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { startFakeFalUpstream, type FakeFalUpstream } from '../support/fake-fal-upstream';
import { startFakeReplicateUpstream } from '../support/fake-replicate-upstream';
import { ADMIN_TOKEN } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { freePort } from '../support/free-port';
import { pollUntil } from '../support/poll';

type Replicate = Awaited<ReturnType<typeof startFakeReplicateUpstream>>;

let a: FakeOpenAIUpstream;
let b: FakeOpenAIUpstream;
let c: FakeOpenAIUpstream;
let d: FakeOpenAIUpstream;
let falRefusing: FakeFalUpstream;
let falOk: FakeFalUpstream;
let replicate: Replicate;
let dir: string;
let deadPort: number;

const CASES: FakeOpenAIMode[] = ['error-500', 'reset', 'hang', 'rate-limited'];
const caseModel = (mode: string, stream: boolean) => `svc-chat-${mode}-${stream ? 'stream' : 'plain'}`;
const oa = (id: string, baseUrl: string, extra: Record<string, unknown> = {}) => ({
  id,
  provider: 'openai-compatible' as const,
  upstreamModel: `up-${id}`,
  baseUrl,
  timeoutSeconds: 2,
  ...extra,
});

beforeAll(async () => {
  [a, b, c, d] = await Promise.all([startFakeOpenAIUpstream(), startFakeOpenAIUpstream(), startFakeOpenAIUpstream(), startFakeOpenAIUpstream()]);
  [falRefusing, falOk] = await Promise.all([startFakeFalUpstream(), startFakeFalUpstream()]);
  replicate = await startFakeReplicateUpstream();
  deadPort = await freePort();
  dir = mkdtempSync(join(tmpdir(), 'gw-routes-'));
  // A model per failure case, so that one case's failures do not open the circuit another case uses.
  const perCase = CASES.flatMap((mode) =>
    [false, true].map((stream) => {
      const name = caseModel(mode, stream);
      const keyEnv = name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
      return {
        id: name,
        group: 'chat' as const,
        ownedBy: 'svc',
        creditsPer10kTokens: 1,
        routes: [oa(`${name}-a`, a.url, { apiKeyEnv: keyEnv }), oa(`${name}-b`, b.url, { priority: 1, apiKeyEnv: keyEnv })],
      };
    }),
  );
  const extra: CatalogInput['models'] = [
    ...perCase,
    {
      id: 'svc-chat-dead-first',
      group: 'chat',
      ownedBy: 'svc',
      creditsPer10kTokens: 1,
      routes: [oa('dead', `http://127.0.0.1:${deadPort}/v1`), oa('chat-b2', b.url, { priority: 1 })],
    },
    {
      id: 'svc-chat-breaker',
      group: 'chat',
      ownedBy: 'svc',
      creditsPer10kTokens: 1,
      routes: [oa('chat-c', c.url), oa('chat-b3', b.url, { priority: 1, apiKeyEnv: 'THIRD_KEY' })],
    },
    { id: 'svc-chat-alone', group: 'chat', ownedBy: 'svc', creditsPer10kTokens: 1, retry: { attempts: 1, budgetSeconds: 30 }, routes: [oa('chat-d', d.url)] },
  ];
  const catalog: CatalogInput = {
    ...BUILTIN_CATALOG,
    models: [
      ...BUILTIN_CATALOG.models.map((m) => {
        if (m.id === 'svc-chat-1') return { ...m, route: undefined, routes: [oa('chat-a', a.url), oa('chat-b', b.url, { priority: 1 })] };
        if (m.id === 'svc-creative-v8')
          return {
            ...m,
            route: undefined,
            routes: [
              oa('img-a', a.url, { apiKeyEnv: 'IMG_KEY' }),
              { id: 'img-replicate', provider: 'replicate' as const, upstreamModel: 'acme/creative', baseUrl: replicate.url, timeoutSeconds: 5, priority: 1 },
            ],
          };
        if (m.id === 'svc-2.5-preview-text-to-video')
          return {
            ...m,
            route: undefined,
            routes: [
              { id: 'fal-refusing', provider: 'fal-queue' as const, upstreamModel: 'fal-ai/video-a', baseUrl: falRefusing.url, timeoutSeconds: 1 },
              { id: 'fal-ok', provider: 'fal-queue' as const, upstreamModel: 'fal-ai/video-b', baseUrl: falOk.url, timeoutSeconds: 1, priority: 1 },
            ],
          };
        return m;
      }),
      ...extra,
    ],
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
});
const gw = useTestGateway(() => ({ MODELS_FILE: join(dir, 'models.json'), VIDEO_POLL_SECONDS: '0.2' }));

afterAll(async () => {
  await Promise.all([a, b, c, d, falRefusing, falOk, replicate].map((u) => u.close()));
  rmSync(dir, { recursive: true, force: true });
});

const chatPaths = (u: FakeOpenAIUpstream) => u.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

async function liveKey(credits = 100) {
  const acct = await gw.newAccount(credits);
  return { acct, key: await gw.newKey(acct) };
}

/** A plain chat call's status, `x-svc-credits` and id; a streamed one's status and body text. */
async function chat(secret: string, model: string, stream = false) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 20,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  });
  return { status: res.status, credits: res.headers.get('x-svc-credits'), retryAfter: res.headers.get('retry-after'), text: await res.text() };
}

const charges = async (keyId: string) =>
  Number((await gw.gateway.database.db.one<{ n: string }>(`select count(*) as n from lease_charges where api_key_id = ?`, [keyId]))!.n);

describe.each<FakeOpenAIMode>(CASES)('the first route answers %s', (mode) => {
  test.each([false, true])('streamed %s: the next route answers, the client is charged once, x-svc-credits is what moved', async (stream) => {
    const { acct, key } = await liveKey();
    a.setMode(mode);
    const before = [chatPaths(a), chatPaths(b)];
    const out = await chat(key.secret, caseModel(mode, stream), stream);
    a.setMode('ok');
    expect(out.status).toBe(200);
    expect([chatPaths(a) - before[0], chatPaths(b) - before[1]]).toEqual([1, 1]);
    expect(b.requests.at(-1)!.json.model).toBe(`up-${caseModel(mode, stream)}-b`);
    if (stream) expect(out.text).toContain('data: [DONE]');
    else expect(Number(out.credits)).toBeGreaterThan(0);
    await pollUntil(
      () => charges(key.id),
      (n) => n === 1,
      5_000,
      20,
    );
    const moved = 100 - (await gw.balance(acct));
    if (!stream) expect(moved).toBeCloseTo(Number(out.credits), 6);
    expect(moved).toBeGreaterThan(0);
  });
});

test('a refused connection (nothing listens on the first route) is answered by the next', async () => {
  const { acct, key } = await liveKey();
  const out = await chat(key.secret, 'svc-chat-dead-first');
  expect(out.status).toBe(200);
  expect(100 - (await gw.balance(acct))).toBeCloseTo(Number(out.credits), 6);
});

test("the client's fault (an upstream 400 about the request) is passed on at once: no other route is asked, nothing charged", async () => {
  const { acct, key } = await liveKey();
  a.setMode('bad-request');
  const before = chatPaths(b);
  const out = await chat(key.secret, 'svc-chat-1');
  a.setMode('ok');
  expect(out.status).toBe(400);
  expect(chatPaths(b)).toBe(before);
  expect(await gw.balance(acct)).toBe(100);
});

test('a stream that dies after its first bytes reached the client is not retried: it ends with an error event, charged what was relayed', async () => {
  const { acct, key } = await liveKey();
  a.setMode('die-mid-stream');
  const before = chatPaths(b);
  const out = await chat(key.secret, 'svc-chat-1', true);
  a.setMode('ok');
  expect(out.status).toBe(200);
  expect(out.text).toContain('upstream_error');
  expect(chatPaths(b)).toBe(before);
  await pollUntil(
    () => charges(key.id),
    (n) => n === 1,
    5_000,
    20,
  );
  expect(await gw.balance(acct)).toBeLessThan(100);
});

test('a failing route opens its circuit after 5 calls and is passed by; /admin/upstreams and /metrics say so', async () => {
  const { key } = await liveKey();
  c.setMode('error-500');
  for (let i = 0; i < 5; i++) expect((await chat(key.secret, 'svc-chat-breaker')).status).toBe(200);
  expect(chatPaths(c)).toBe(5);
  expect((await chat(key.secret, 'svc-chat-breaker')).status).toBe(200);
  expect(chatPaths(c)).toBe(5); // open: not asked
  const upstreams = await gw.api('GET', '/admin/upstreams', { token: ADMIN_TOKEN });
  expect(upstreams.status).toBe(200);
  expect(upstreams.body.data.find((u: { id: string }) => u.id === 'chat-c')).toMatchObject({
    provider: 'openai-compatible',
    models: ['svc-chat-breaker'],
    state: 'open',
    window: { calls: 5, failures: 5 },
    lastError: 'HTTP 500',
    openedAt: expect.any(String),
  });
  expect(upstreams.body.data.find((u: { id: string }) => u.id === 'chat-b3')).toMatchObject({ state: 'closed' });
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(metrics).toMatch(/svc_upstream_circuit_state\{route="chat-c"\} 2/);
  expect(metrics).toMatch(/svc_upstream_calls_total\{route="chat-c",model="svc-chat-breaker",outcome="failed"\} 5/);
  expect(metrics).toMatch(/svc_upstream_call_seconds_count\{route="chat-b3"\} 6/);
  // Customers see no route or upstream.
  const models = await gw.api('GET', '/v1/models', { token: key.secret });
  expect(JSON.stringify(models.body)).not.toMatch(/chat-c|127\.0\.0\.1|routes/);
  c.setMode('ok');
});

test('a model whose every route is open answers 503 upstream_unavailable with Retry-After at once, calling nothing and charging nothing', async () => {
  const { acct, key } = await liveKey();
  d.setMode('error-500');
  for (let i = 0; i < 5; i++) expect((await chat(key.secret, 'svc-chat-alone')).status).toBe(502);
  const asked = chatPaths(d);
  const out = await chat(key.secret, 'svc-chat-alone');
  expect(out.status).toBe(503);
  expect(JSON.parse(out.text).error.code).toBe('upstream_unavailable');
  expect(Number(out.retryAfter)).toBeGreaterThan(0);
  expect(Number(out.retryAfter)).toBeLessThanOrEqual(30);
  expect(chatPaths(d)).toBe(asked);
  expect(gw.gateway.services.leaseBook.inFlightFor(acct.id)).toBe(0);
  expect(await gw.balance(acct)).toBe(100);
  d.setMode('ok');
});

test('an image model fails over to its Replicate route: a decodable PNG, charged its price once', async () => {
  const { acct, key } = await liveKey();
  a.setMode('error-500');
  replicate.setScript({ inline: true, finishAfterMs: 50 });
  const res = await gw.api('POST', '/v1/images/generations', {
    token: key.secret,
    body: { model: 'svc-creative-v8', prompt: 'a fox', size: '64x64', response_format: 'b64_json' },
  });
  a.setMode('ok');
  expect(res.status).toBe(200);
  expect(PNG.sync.read(Buffer.from(res.body.data[0].b64_json, 'base64')).width).toBeGreaterThan(0);
  expect(replicate.requests.some((r) => r.method === 'POST' && r.path.includes('/models/acme/creative/predictions'))).toBe(true);
  expect(res.headers.get('x-svc-credits')).toBe('1');
  expect(await gw.balance(acct)).toBe(99);
});

test('a video submission refused by the first route goes to the next, which is then polled; a lost answer stays with its route: FAILED, refunded', async () => {
  const { acct, key } = await liveKey();
  falRefusing.setMode({ submit: 'error-500' });
  falOk.setMode({ submit: 'ok', outcome: 'completed', pollsBeforeDone: 1000 });
  const queued = await gw.api('POST', '/v1/video/queue', {
    token: key.secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'a lighthouse', duration: '5s', resolution: '480p' },
  });
  expect(queued.status).toBe(200);
  const id = queued.body.id;
  const routeOf = () =>
    gw.gateway.database.db.one<{ route_id: string | null; queue_id: string | null }>(`select route_id, queue_id from video_jobs where id = ?`, [id]);
  await pollUntil(routeOf, (r) => r?.route_id !== null, 10_000, 50);
  expect((await routeOf())!.route_id).toBe('fal-ok');
  await pollUntil(
    async () => falOk.requests.filter((r) => r.method === 'GET' && r.path.includes('/status')).length,
    (n) => n >= 2,
    10_000,
    50,
  );
  expect(falOk.requests.filter((r) => r.method === 'GET').every((r) => r.path.startsWith('/fal-ai/video-b/'))).toBe(true);
  expect(falRefusing.requests.filter((r) => r.method === 'GET')).toHaveLength(0);

  // Accepted, then its answer lost (later than the route's 1 s timeout): no second submission anywhere.
  falRefusing.setMode({ submit: 'ok', submitDelayMs: 1_500 });
  const okSubmits = falOk.requests.filter((r) => r.method === 'POST').length;
  const lost = await gw.api('POST', '/v1/video/queue', {
    token: key.secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'lost answer', duration: '5s', resolution: '480p' },
  });
  const done = await pollUntil(
    () => gw.api('POST', '/v1/video/retrieve', { token: key.secret, body: { id: lost.body.id } }),
    (r) => r.body.status !== 'PROCESSING',
    15_000,
    100,
  );
  expect(done.body.status).toBe('FAILED');
  expect(falOk.requests.filter((r) => r.method === 'POST').length).toBe(okSubmits);
  // The first job is charged (still running), the lost one refunded.
  expect(await gw.balance(acct)).toBe(100 - queued.body.credits_charged);
});

test('the openai SDK with its default retries, against a model whose first route is down: one request, answered, charged once', async () => {
  const { acct, key } = await liveKey();
  const sdk = new OpenAI({ apiKey: key.secret, baseURL: `${gw.url}/v1` });
  const before = chatPaths(b);
  const { data, response } = await sdk.chat.completions.create({ model: 'svc-chat-dead-first', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
  expect(data.choices[0].message.content).toEqual(expect.any(String));
  expect(chatPaths(b) - before).toBe(1);
  expect(await charges(key.id)).toBe(1);
  expect(100 - (await gw.balance(acct))).toBeCloseTo(Number(response.headers.get('x-svc-credits')), 6);
});
