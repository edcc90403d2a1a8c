/**
 * The request log end to end: every kind of authenticated /v1 call that names a model is one row
 * under its x-request-id, with the credits the ledger charged for it (a test key's: what it
 * would have cost, the ledger untouched): plain and streamed chat (the JSON lane and Express),
 * a stream its client aborts, an upstream that fails, refusals after authentication, an
 * Idempotency-Key and its replay, images, video jobs. Chat goes to a fake upstream; the rest to
 * the simulator.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';
import { useTestGateway } from '../support/use-test-gateway';
import type { TestAccount } from '../support/gateway-harness';
import { allCallsBilled } from '../support/billed';
import { FAKE_CHAT_DELTAS, FAKE_USAGE, makePng, startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';

let upstream: FakeOpenAIUpstream;
let dir: string;
beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  dir = mkdtempSync(join(tmpdir(), 'gw-reqlog-'));
  const catalog: CatalogInput = {
    ...BUILTIN_CATALOG,
    models: BUILTIN_CATALOG.models.map((m) =>
      m.id === 'svc-chat-1'
        ? {
            ...m,
            route: {
              provider: 'openai-compatible' as const,
              upstreamModel: 'up-chat',
              baseUrl: upstream.url,
              apiKeyEnv: 'UPSTREAM_TEST_KEY',
              timeoutSeconds: 5,
            },
            retry: { attempts: 1, budgetSeconds: 30 },
          }
        : m,
    ),
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
});
const gw = useTestGateway(() => ({
  MODELS_FILE: join(dir, 'models.json'),
  UPSTREAM_TEST_KEY: 'sk-upstream',
  UPSTREAM_CIRCUIT_MIN_CALLS: '1000000',
  SIMULATOR_VIDEO_SECONDS: '0.2',
}));
afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => upstream.setMode('ok'));

const chat = { model: 'svc-chat-1', messages: [{ role: 'user', content: 'Say hello' }] };

/** The account's rows (the writer's flushed first), by request id. */
async function rows(acct: TestAccount): Promise<Map<string, any>> {
  await gw.gateway.services.requestLog.flush();
  const res = await gw.api('GET', '/account/requests?first=100', { token: acct.idToken });
  expect(res.status).toBe(200);
  return new Map(res.body.data.map((r: { id: string }) => [r.id, r]));
}

/** What the ledger charged a call (its lease charge plus what it took from the balance directly), in credits. */
async function charged(reference: string): Promise<number> {
  const row = await gw.gateway.database.db.one<{ micro: string | null }>(
    `select (coalesce((select sum(amount_micro) from lease_charges where request_id = ?), 0)
           - coalesce((select sum(amount_micro) from ledger_entries where kind = 'charge' and reference = ?), 0)) as micro`,
    [reference, reference],
  );
  return Number(row?.micro ?? 0) / 1_000_000;
}

const requestId = (res: { headers: Headers }) => res.headers.get('x-request-id')!;
const callIdOfStream = (text: string) => /"id":"(chatcmpl-[^"]+)"/.exec(text)![1]!;
const usage = (promptTokens: number, completionTokens: number, images = 0, seconds = 0) => ({ promptTokens, completionTokens, images, seconds });

test('plain and streamed chat, through the JSON lane and through Express, each a row with the credits the ledger charged', async () => {
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct);
  const plain = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: chat });
  const streamed = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: { ...chat, stream: true } });
  const keyed = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: chat, headers: { 'Idempotency-Key': 'k-1' } });
  const replay = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: chat, headers: { 'Idempotency-Key': 'k-1' } });
  expect([plain.status, streamed.status, keyed.status, replay.status]).toEqual([200, 200, 200, 200]);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  await allCallsBilled(gw, acct.id);

  const log = await rows(acct);
  const common = { keyId: key.id, model: 'svc-chat-1', endpoint: '/v1/chat/completions', status: 200, error: null, jobId: null };
  const tokens = usage(FAKE_USAGE.prompt_tokens, FAKE_USAGE.completion_tokens);
  expect(log.get(requestId(plain))).toMatchObject({ ...common, usage: tokens, idempotencyKey: null, credits: await charged(plain.body.id) });
  expect(log.get(requestId(plain)).credits).toBe(Number(plain.headers.get('x-svc-credits')));
  expect(log.get(requestId(streamed))).toMatchObject({ ...common, usage: tokens, credits: await charged(callIdOfStream(streamed.body)) });
  expect(log.get(requestId(keyed))).toMatchObject({ ...common, idempotencyKey: 'k-1', credits: await charged(keyed.body.id) });
  // The replay moved nothing: its row says so, whatever x-svc-credits repeats of the first answer.
  expect(log.get(requestId(replay))).toMatchObject({ ...common, idempotencyKey: 'k-1', credits: 0 });
  expect(log.size).toBe(4);
  const sum = [...log.values()].reduce((s, r) => s + r.credits, 0);
  expect(sum).toBeCloseTo(10 - (await gw.balance(acct)), 6);
  expect(log.get(requestId(plain)).latencyMs).toBeGreaterThanOrEqual(0);
});

test('a stream the client aborts: 200, client_closed, charged what was sent; an upstream that fails: its 502, nothing charged', async () => {
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct);
  upstream.setMode('stall-mid-stream');
  const abort = new AbortController();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...chat, stream: true }),
    signal: abort.signal,
  });
  const reader = res.body!.getReader();
  let seen = '';
  while (!seen.includes(JSON.stringify(FAKE_CHAT_DELTAS[0]))) seen += Buffer.from((await reader.read()).value!).toString('utf8');
  abort.abort();
  await allCallsBilled(gw, acct.id);

  upstream.setMode('error-500');
  const failed = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: chat });
  const failedStream = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: { ...chat, stream: true } });
  expect([failed.status, failedStream.status]).toEqual([502, 502]);
  await allCallsBilled(gw, acct.id);

  const log = await rows(acct);
  const aborted = log.get(requestId(res));
  expect(aborted).toMatchObject({ status: 200, error: { type: 'client_closed', code: null }, model: 'svc-chat-1' });
  expect(aborted.credits).toBeGreaterThan(0);
  expect(aborted.credits).toBe(await charged(callIdOfStream(seen)));
  for (const r of [failed, failedStream]) {
    expect(log.get(requestId(r))).toMatchObject({ status: 502, credits: 0, usage: usage(0, 0), error: { type: 'upstream_error', code: r.body.error.code } });
  }
  expect(10 - (await gw.balance(acct))).toBeCloseTo(aborted.credits, 6);
});

test('refusals after authentication are rows when the call named a model; others are not', async () => {
  const acct = await gw.newAccount(0);
  const key = await gw.newKey(acct, { blockedModels: ['svc-creative-v8'] });
  const broke = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: chat });
  const unknown = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: { ...chat, model: 'no-such-model' } });
  const badField = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: { ...chat, max_tokens: -1 }, unchecked: true });
  const blocked = await gw.api('POST', '/v1/images/generations', { token: key.secret, body: { model: 'svc-creative-v8', prompt: 'a cat' } });
  // Named no model, or never authenticated: nothing to log.
  const noModel = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: { messages: chat.messages }, unchecked: true });
  const stranger = await gw.api('POST', '/v1/chat/completions', { token: 'svc_live_0000000000000000_' + 'x'.repeat(40), body: chat, unchecked: true });
  expect([broke.status, unknown.status, badField.status, blocked.status, noModel.status, stranger.status]).toEqual([402, 404, 400, 403, 400, 401]);

  const log = await rows(acct);
  expect(log.size).toBe(4);
  expect(log.get(requestId(broke))).toMatchObject({ status: 402, model: 'svc-chat-1', credits: 0, error: { type: 'insufficient_credits' } });
  expect(log.get(requestId(unknown))).toMatchObject({ status: 404, model: 'no-such-model', error: { type: 'not_found_error', code: 'model_not_found' } });
  expect(log.get(requestId(badField))).toMatchObject({ status: 400, model: 'svc-chat-1', error: { type: 'invalid_request_error' } });
  expect(log.get(requestId(blocked))).toMatchObject({ status: 403, endpoint: '/v1/images/generations', error: { type: 'model_forbidden' } });
});

test('images, video jobs and test keys: images delivered, the job and its seconds, what a test call would have cost', async () => {
  const acct = await gw.newAccount(100);
  const live = await gw.newKey(acct);
  const test = await gw.newKey(acct, { mode: 'test' });
  const image = await gw.api('POST', '/v1/images/generations', { token: live.secret, body: { model: 'svc-creative-v8', prompt: 'a lighthouse' } });
  const video = await gw.api('POST', '/v1/video/queue', {
    token: live.secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'waves', duration: '5s', resolution: '480p' },
  });
  const testChat = await gw.api('POST', '/v1/chat/completions', { token: test.secret, body: chat });
  const testVideo = await gw.api('POST', '/v1/video/queue', {
    token: test.secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'waves', duration: '10s', resolution: '480p' },
  });
  expect([image.status, video.status, testChat.status, testVideo.status]).toEqual([200, 200, 200, 200]);
  await allCallsBilled(gw, acct.id);
  const before = await gw.balance(acct);

  const log = await rows(acct);
  expect(log.get(requestId(image))).toMatchObject({ model: 'svc-creative-v8', usage: usage(0, 0, 1), credits: 1, jobId: null });
  expect(await charged(await imageCallId(acct))).toBe(1);
  expect(log.get(requestId(video))).toMatchObject({ endpoint: '/v1/video/queue', jobId: video.body.id, usage: usage(0, 0, 0, 5), credits: 10 });
  expect(await charged(video.body.id)).toBe(10);
  const wouldCost = Number(testChat.headers.get('x-svc-credits'));
  expect(wouldCost).toBeGreaterThan(0);
  expect(log.get(requestId(testChat))).toMatchObject({ keyId: test.id, credits: wouldCost, status: 200 });
  expect(log.get(requestId(testVideo))).toMatchObject({ keyId: test.id, jobId: testVideo.body.id, credits: 20, usage: usage(0, 0, 0, 10) });
  // The test calls moved nothing.
  expect(await charged(testChat.body.id)).toBe(0);
  expect(await charged(testVideo.body.id)).toBe(0);
  expect(100 - before).toBe(11);
});

test('the Responses API, an image edit and motion control: each a row of its endpoint, with its charge', async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct);
  const response = await gw.api('POST', '/v1/responses', { token: key.secret, body: { model: 'svc-chat-1', input: 'Say hello', store: false } });
  const motion = await gw.api('POST', '/v1/video/motion-control', {
    token: key.secret,
    body: { image_url: 'https://example.com/a.png', video_url: 'https://example.com/a.mp4', duration_seconds: 2 },
  });
  const form = new FormData();
  form.append('prompt', 'a hat');
  form.append('image', new Blob([makePng(32, 32)], { type: 'image/png' }), 'in.png');
  const edit = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key.secret}` }, body: form });
  expect([response.status, motion.status, edit.status]).toEqual([200, 200, 200]);
  await allCallsBilled(gw, acct.id);

  const log = await rows(acct);
  expect(log.get(requestId(response))).toMatchObject({
    endpoint: '/v1/responses',
    model: 'svc-chat-1',
    credits: Number(response.headers.get('x-svc-credits')),
    usage: usage(FAKE_USAGE.prompt_tokens, FAKE_USAGE.completion_tokens),
  });
  expect(log.get(requestId(motion))).toMatchObject({
    endpoint: '/v1/video/motion-control',
    model: 'svc-v3-motion-control',
    jobId: motion.body.id,
    credits: 10,
    usage: usage(0, 0, 0, 2),
  });
  expect(await charged(motion.body.id)).toBe(10);
  expect(log.get(requestId(edit))).toMatchObject({ endpoint: '/v1/images/edits', model: 'svc-image-edit-1', credits: 2, usage: usage(0, 0, 1) });
  const sum = [...log.values()].reduce((s, r) => s + r.credits, 0);
  expect(sum).toBeCloseTo(100 - (await gw.balance(acct)), 6);
});

/** The reference of the account's one image charge. */
async function imageCallId(acct: TestAccount): Promise<string> {
  const row = await gw.gateway.database.db.one<{ request_id: string }>(
    `select request_id from lease_charges where account_id = ? and request_id like 'img_%'`,
    [acct.id],
  );
  return row!.request_id;
}
