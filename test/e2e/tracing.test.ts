/**
 * OpenTelemetry traces as a collector receives them (OTLP/HTTP on a real socket) from a gateway
 * with OTEL_EXPORTER_OTLP_ENDPOINT set: a chat call whose first route fails is one server span
 * and a client span per upstream attempt, with the GenAI attributes and what the call cost; the
 * upstreams saw the `traceparent` of their attempt's span; a caller's `traceparent` makes the
 * call part of the caller's trace; the JSON lane and Express alike; a stream's usage and cost; a
 * webhook delivery carries the `traceparent` of its own span.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { parseTraceparent, SPAN_KIND, startOtlpReceiver, STATUS, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';

let otlp: OtlpReceiver;
let first: FakeOpenAIUpstream;
let second: FakeOpenAIUpstream;
let webhooks: Awaited<ReturnType<typeof startWebhookReceiver>>;
let dir: string;

const route = (id: string, baseUrl: string, priority: number) => ({
  id,
  provider: 'openai-compatible' as const,
  upstreamModel: `up-${id}`,
  baseUrl,
  timeoutSeconds: 5,
  priority,
});

beforeAll(async () => {
  [otlp, first, second, webhooks] = await Promise.all([startOtlpReceiver(), startFakeOpenAIUpstream(), startFakeOpenAIUpstream(), startWebhookReceiver()]);
  dir = mkdtempSync(join(tmpdir(), 'gw-tracing-'));
  const catalog: CatalogInput = {
    ...BUILTIN_CATALOG,
    models: BUILTIN_CATALOG.models.map((m) =>
      m.id === 'svc-chat-1' ? { ...m, route: undefined, routes: [route('chat-first', first.url, 0), route('chat-second', second.url, 1)] } : m,
    ),
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
});
// Registered before the gateway's fixture: closed after it, so the gateway's last spans still land.
afterAll(async () => {
  await Promise.all([otlp, first, second, webhooks].map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});
const gw = useTestGateway(() => ({
  MODELS_FILE: join(dir, 'models.json'),
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
  OTEL_SERVICE_NAME: 'svc-gateway-under-test',
  OTEL_BSP_SCHEDULE_DELAY: '50',
  WEBHOOK_ALLOW_LOCAL: '1',
}));

beforeEach(() => {
  first.setMode('ok');
  second.setMode('ok');
});

async function liveKey(credits = 100) {
  const acct = await gw.newAccount(credits);
  return { acct, key: await gw.newKey(acct) };
}

async function chat(secret: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20, ...extra }),
  });
  return { status: res.status, credits: res.headers.get('x-svc-credits'), text: await res.text() };
}

/** The trace's server span and its client spans, once the server span (it ends last) has come. */
async function traceOf(traceId: string, clients: number): Promise<{ server: ReceivedSpan; attempts: ReceivedSpan[] }> {
  const spans = await pollUntil(
    async () => otlp.spansOf(traceId),
    (s) => s.some((x) => x.kind === SPAN_KIND.server) && s.filter((x) => x.kind === SPAN_KIND.client).length >= clients,
    10_000,
    25,
  );
  return { server: spans.find((s) => s.kind === SPAN_KIND.server)!, attempts: spans.filter((s) => s.kind === SPAN_KIND.client) };
}

const lastTraceparent = (u: FakeOpenAIUpstream) => parseTraceparent(u.requests.at(-1)!.headers.traceparent);

test('a chat call whose first route fails: one server span, a client span per attempt, the GenAI attributes, and each upstream saw its attempt’s traceparent', async () => {
  const { key } = await liveKey();
  first.setMode('error-500');
  const out = await chat(key.secret);
  expect(out.status).toBe(200);
  const answer = JSON.parse(out.text);

  const toFirst = lastTraceparent(first)!;
  const toSecond = lastTraceparent(second)!;
  expect(toFirst).toBeDefined();
  expect(toSecond.traceId).toBe(toFirst.traceId);
  expect(toSecond.sampled).toBe(true);

  const { server, attempts } = await traceOf(toFirst.traceId, 2);
  expect(server).toMatchObject({ name: 'POST /v1/chat/completions', parentSpanId: undefined, status: STATUS.unset, service: 'svc-gateway-under-test' });
  expect(server.attributes).toMatchObject({
    'http.request.method': 'POST',
    'http.route': '/v1/chat/completions',
    'http.response.status_code': 200,
    'gen_ai.request.model': 'svc-chat-1',
    'gen_ai.usage.input_tokens': answer.usage.prompt_tokens,
    'gen_ai.usage.output_tokens': answer.usage.completion_tokens,
  });
  expect(server.attributes['svc.credits']).toBeCloseTo(Number(out.credits), 6);
  expect(Number(out.credits)).toBeGreaterThan(0);

  expect(attempts).toHaveLength(2);
  const [failed, ok] = attempts;
  for (const a of attempts) expect(a.parentSpanId).toBe(server.spanId);
  expect(failed).toMatchObject({ name: 'upstream chat-first', status: STATUS.error });
  expect(failed!.attributes).toMatchObject({
    'svc.route': 'chat-first',
    'svc.attempt': 0,
    'svc.upstream.outcome': 'failed',
    'gen_ai.request.model': 'up-chat-first',
  });
  expect(failed!.attributes['error.type']).toContain('500');
  expect(ok).toMatchObject({ name: 'upstream chat-second', status: STATUS.unset });
  expect(ok!.attributes).toMatchObject({
    'svc.route': 'chat-second',
    'svc.attempt': 1,
    'svc.upstream.outcome': 'ok',
    'gen_ai.provider.name': 'openai-compatible',
  });
  // Each upstream request carried its own attempt's span as the parent.
  expect(toFirst.spanId).toBe(failed!.spanId);
  expect(toSecond.spanId).toBe(ok!.spanId);
  // The collector is sent OTLP's JSON encoding.
  expect(otlp.contentTypes.every((t) => t.startsWith('application/json'))).toBe(true);
});

test('a caller’s traceparent makes the call part of its trace, through Express (an Idempotency-Key sends it there) as through the JSON lane', async () => {
  const { key } = await liveKey();
  const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
  const callerSpan = '00f067aa0ba902b7';
  const out = await chat(key.secret, { traceparent: `00-${callerTrace}-${callerSpan}-01`, 'idempotency-key': `trace-${Date.now()}` });
  expect(out.status).toBe(200);
  expect(lastTraceparent(first)!.traceId).toBe(callerTrace);
  const { server, attempts } = await traceOf(callerTrace, 1);
  expect(server.parentSpanId).toBe(callerSpan);
  expect(server.name).toBe('POST /v1/chat/completions');
  expect(server.attributes['gen_ai.request.model']).toBe('svc-chat-1');
  expect(attempts.map((a) => [a.attributes['svc.route'], a.parentSpanId])).toEqual([['chat-first', server.spanId]]);
});

test('a stream’s server span carries the usage and the cost settled when it ended', async () => {
  const { acct, key } = await liveKey();
  const out = await chat(key.secret, {}, { stream: true, stream_options: { include_usage: true } });
  expect(out.status).toBe(200);
  const usage = out.text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)))
    .find((e) => e.usage)?.usage;
  const { server } = await traceOf(lastTraceparent(first)!.traceId, 1);
  expect(server.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': usage.prompt_tokens, 'gen_ai.usage.output_tokens': usage.completion_tokens });
  const moved = 100 - (await gw.balance(acct));
  expect(moved).toBeGreaterThan(0);
  expect(server.attributes['svc.credits']).toBeCloseTo(moved, 6);
});

test('a webhook delivery is a client span of its own, and the receiver gets its traceparent', async () => {
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct);
  const set = await gw.api('PATCH', '/account/webhook', { token: acct.idToken, body: { url: webhooks.url } });
  expect(set.status).toBe(200);
  webhooks.verifyWith([set.body.secret]);
  expect((await gw.api('PATCH', '/account', { token: acct.idToken, body: { lowBalanceAlert: 8.5 } })).status).toBe(200);
  // Two images of a simulator model (1 credit each) take the balance shown below 8.5: balance.low.
  for (let i = 0; i < 2; i++) {
    const res = await gw.api('POST', '/v1/images/generations', {
      token: key.secret,
      body: { model: 'svc-creative-v8', prompt: 'a lighthouse', size: '1024x1024' },
    });
    expect(res.status).toBe(200);
  }
  const event = await pollUntil(
    async () => webhooks.received.find((e) => e.body.type === 'balance.low' && e.body.data?.accountId === acct.id),
    (e) => e !== undefined,
  );
  expect(event!.verifiedWith).toBe(set.body.secret);
  const sent = parseTraceparent(event!.headers.traceparent)!;
  expect(sent).toBeDefined();
  const delivery = await pollUntil(
    async () => otlp.spansOf(sent.traceId).find((s) => s.spanId === sent.spanId),
    (s) => s !== undefined,
    10_000,
    25,
  );
  expect(delivery).toMatchObject({ name: 'webhook delivery', kind: SPAN_KIND.client, status: STATUS.unset });
  expect(delivery!.attributes).toMatchObject({ 'server.address': '127.0.0.1', 'http.response.status_code': 200 });
  // The image calls themselves: server spans of a simulator model, with no upstream attempt.
  const images = await pollUntil(
    async () => otlp.spans.filter((s) => s.name === 'POST /v1/images/generations' && s.attributes['gen_ai.request.model'] === 'svc-creative-v8'),
    (s) => s.length >= 2,
    10_000,
    25,
  );
  expect(images.every((s) => s.attributes['svc.credits'] === 1)).toBe(true);
});
