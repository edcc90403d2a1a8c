/**
 * The OpenAI-compatible provider end to end, THROUGH the gateway: a MODELS_FILE re-routes the
 * chat model, one standard image model and the edit model to a fake upstream on a real socket,
 * and the `openai` SDK drives the gateway with a live key. Covers what the upstream receives
 * (its own key, its own model id, multipart edits), what the caller is billed (the upstream's
 * usage, n × price), and that every upstream failure is a 502 (or 422) that charges nothing
 * and never shows the upstream's key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';
import { pollUntil } from '../support/poll';
import type { TestAccount } from '../support/gateway-harness';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { useTestGateway } from '../support/use-test-gateway';
import { allCallsBilled } from '../support/billed';
import { estimatePromptTokens } from '../../src/domain/chat/prompt-tokens';
import { chatCostMicro } from '../../src/domain/shared/money';
import { decodePng } from '../support/png';
import {
  FAKE_CHAT_DELTAS,
  FAKE_CHAT_REPLY,
  FAKE_CITATION,
  FAKE_USAGE,
  makePng,
  startFakeOpenAIUpstream,
  type FakeOpenAIMode,
  type FakeOpenAIUpstream,
} from '../support/fake-openai-upstream';

const UPSTREAM_SECRET = 'sk-upstream-secret';
const UPSTREAM_MODELS: Record<string, string> = {
  'svc-chat-1': 'up-chat-model',
  'flux-pro': 'up-flux-model',
  'svc-image-edit-1': 'up-edit-model',
};
const FLUX_PRO_PRICE = 6;
const EDIT_PRICE = 2;
const USAGE_CREDITS = FAKE_USAGE.total_tokens / 10_000;

let upstream: FakeOpenAIUpstream;
let dir: string;

beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  dir = mkdtempSync(join(tmpdir(), 'gw-models-'));
  const catalog: CatalogInput = {
    ...BUILTIN_CATALOG,
    models: BUILTIN_CATALOG.models.map((m) =>
      UPSTREAM_MODELS[m.id]
        ? {
            ...m,
            route: {
              provider: 'openai-compatible' as const,
              upstreamModel: UPSTREAM_MODELS[m.id],
              baseUrl: upstream.url,
              apiKeyEnv: 'UPSTREAM_TEST_KEY',
              timeoutSeconds: 2, // short, for the hang cases; room for a loaded CI machine
            },
            // One route, one attempt: each case here is what a single upstream failure does (retries and failover: upstream-routes tests).
            retry: { attempts: 1, budgetSeconds: 30 },
          }
        : m,
    ),
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
});
// Failure after failure on one route would open its circuit: these cases test each failure itself.
const gw = useTestGateway(() => ({ MODELS_FILE: join(dir, 'models.json'), UPSTREAM_TEST_KEY: UPSTREAM_SECRET, UPSTREAM_CIRCUIT_MIN_CALLS: '1000000' }));

afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  upstream.setMode('ok');
  upstream.requests.length = 0;
});

const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });

async function liveClient(credits: number): Promise<{ acct: TestAccount; openai: OpenAI; key: { id: string; secret: string } }> {
  const acct = await gw.newAccount(credits);
  const key = await gw.newKey(acct);
  return { acct, openai: client(key.secret), key };
}

const chatBody = { model: 'svc-chat-1', messages: [{ role: 'user' as const, content: 'Say hello to the world' }] };

/** What the upstream got for its last request: our key and its own model id, never ours. */
function expectUpstreamSaw(path: string, upstreamModel: string): void {
  expect(upstream.requests).toHaveLength(1);
  const r = upstream.requests[0];
  expect(r.method).toBe('POST');
  expect(r.path).toBe(path);
  expect(r.headers.authorization).toBe(`Bearer ${UPSTREAM_SECRET}`);
  if (r.json) expect(r.json.model).toBe(upstreamModel);
  else expect(r.parts?.find((p) => p.name === 'model')?.data.toString()).toBe(upstreamModel);
}

/** The caller's key must never reach the upstream either. */
function expectCallerKeyNotForwarded(secret: string): void {
  for (const r of upstream.requests) expect(r.raw.toString('latin1') + JSON.stringify(r.headers)).not.toContain(secret);
}

/** Waits until every hold of the account has been settled (a streamed call settles after the response). */
/**
 * Waits until every call of the account is billed (its reservation settled, its charge
 * committed), and answers the most a call of `chatBody` may be charged: its hold.
 */
async function settledHolds(acct: TestAccount): Promise<{ heldMicro: number }> {
  const messages = chatBody.messages.map((m) => ({ ...m }));
  const heldMicro = chatCostMicro(Math.ceil(estimatePromptTokens(messages, {}) * 1.25) + 16 + 1024, 1);
  await allCallsBilled(gw, acct.id);
  return { heldMicro };
}

describe('chat through an OpenAI-compatible upstream', () => {
  test('a completion relays the upstream answer and is billed the upstream usage', async () => {
    const { acct, openai, key } = await liveClient(10);
    const res = await openai.chat.completions.create(chatBody);
    expect(res.model).toBe('svc-chat-1');
    expect(res.choices[0].message.content).toBe(FAKE_CHAT_REPLY);
    expect(res.usage).toMatchObject(FAKE_USAGE);
    expectUpstreamSaw('/v1/chat/completions', 'up-chat-model');
    expectCallerKeyNotForwarded(key.secret);
    expect(await gw.balance(acct)).toBeCloseTo(10 - USAGE_CREDITS, 9);
  });

  test("what the upstream adds to an answer reaches the client: a message's annotations (url citations), the system fingerprint, the service tier", async () => {
    const { openai } = await liveClient(10);
    upstream.setMode('cited');
    try {
      const res = await openai.chat.completions.create(chatBody);
      expect(res.choices[0].message.annotations).toEqual([FAKE_CITATION]);
      expect(res.system_fingerprint).toBe('fp_fake1');
      expect(res.service_tier).toBe('flex');
    } finally {
      upstream.setMode('ok');
    }
    // An upstream that says none of it: the fields OpenAI always sends, empty.
    const plain = await openai.chat.completions.create(chatBody);
    expect(plain.choices[0].message.annotations).toEqual([]);
    expect(plain.system_fingerprint).toBeNull();
    expect(plain.service_tier).toBeUndefined();
  });

  test("a streamed completion's chunks carry the upstream's system fingerprint and service tier, the usage chunk too; null and absent when it says none", async () => {
    const { openai } = await liveClient(10);
    upstream.setMode('cited');
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    try {
      for await (const c of await openai.chat.completions.create({ ...chatBody, stream: true, stream_options: { include_usage: true } })) chunks.push(c);
    } finally {
      upstream.setMode('ok');
    }
    expect(chunks.length).toBeGreaterThan(2);
    expect(chunks.at(-1)!.usage).toBeTruthy();
    for (const c of chunks) {
      expect(c.system_fingerprint).toBe('fp_fake1');
      expect(c.service_tier).toBe('flex');
    }
    const plain: OpenAI.ChatCompletionChunk[] = [];
    for await (const c of await openai.chat.completions.create({ ...chatBody, stream: true })) plain.push(c);
    for (const c of plain) {
      expect(c.system_fingerprint).toBeNull();
      expect(c.service_tier).toBeUndefined();
    }
  });

  test('stream_options.include_obfuscation reaches the upstream as sent, beside the include_usage the gateway always asks for', async () => {
    const { openai } = await liveClient(10);
    let text = '';
    for await (const c of await openai.chat.completions.create({ ...chatBody, stream: true, stream_options: { include_obfuscation: false } }))
      text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe(FAKE_CHAT_REPLY);
    expect(upstream.requests[0].json.stream_options).toEqual({ include_usage: true, include_obfuscation: false });
    upstream.requests.length = 0;
    for await (const c of await openai.chat.completions.create({ ...chatBody, stream: true })) void c;
    expect(upstream.requests[0].json.stream_options).toEqual({ include_usage: true });
  });

  test('a Responses stream forwards stream_options.include_obfuscation too', async () => {
    const { openai } = await liveClient(10);
    upstream.requests.length = 0;
    let text = '';
    for await (const e of await openai.responses.create({
      model: 'svc-chat-1',
      input: 'Say hello',
      stream: true,
      stream_options: { include_obfuscation: false },
    })) {
      if (e.type === 'response.output_text.delta') text += e.delta;
    }
    expect(text).toBe(FAKE_CHAT_REPLY);
    expect(upstream.requests[0].json.stream_options).toEqual({ include_usage: true, include_obfuscation: false });
    upstream.requests.length = 0;
    for await (const e of await openai.responses.create({ model: 'svc-chat-1', input: 'Say hello', stream: true })) void e;
    expect(upstream.requests[0].json.stream_options).toEqual({ include_usage: true });
  });

  test('a streamed completion with include_usage relays the deltas and the upstream usage, billed the same', async () => {
    const { acct, openai } = await liveClient(10);
    const stream = await openai.chat.completions.create({ ...chatBody, stream: true, stream_options: { include_usage: true } });
    const deltas: string[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice?.delta?.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
    expect(deltas.join('')).toBe(FAKE_CHAT_DELTAS.join(''));
    expect(finish).toBe('stop');
    expect(usage).toMatchObject(FAKE_USAGE);
    expectUpstreamSaw('/v1/chat/completions', 'up-chat-model');
    expect(upstream.requests[0].json.stream).toBe(true);
    await settledHolds(acct);
    expect(await gw.balance(acct)).toBeCloseTo(10 - USAGE_CREDITS, 9);
  });

  test('a test key on the re-routed model is served by the simulator: the upstream sees nothing', async () => {
    const acct = await gw.newAccount(1);
    const key = await gw.newKey(acct, { mode: 'test' });
    const openai = client(key.secret);
    const res = await openai.chat.completions.create(chatBody);
    expect(res.choices[0].message.content).not.toBe(FAKE_CHAT_REPLY);
    let streamed = '';
    for await (const c of await openai.chat.completions.create({ ...chatBody, stream: true })) streamed += c.choices[0]?.delta?.content ?? '';
    expect(streamed.length).toBeGreaterThan(0);
    const img = await openai.images.generate({ model: 'flux-pro', prompt: 'a cat', size: '64x64' });
    expect(img.data).toHaveLength(1);
    await openai.images.edit({ model: 'svc-image-edit-1', image: await toFile(makePng(32, 32), 'in.png', { type: 'image/png' }), prompt: 'blue' });
    expect(upstream.requests).toEqual([]);
    expect(await gw.balance(acct)).toBe(1);
  });

  const failures: [FakeOpenAIMode, string][] = [
    ['error-500', 'upstream 500'],
    ['malformed-json', 'malformed JSON'],
    ['reset', 'connection reset'],
    ['hang', 'no answer within the 2 s timeout'],
  ];
  for (const [mode, label] of failures) {
    test(`${label} answers 502 upstream_error, charges nothing and never shows the upstream key`, async () => {
      const { acct, key } = await liveClient(10);
      upstream.setMode(mode);
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify(chatBody),
      });
      const text = await res.text();
      expect(res.status).toBe(502);
      expect(JSON.parse(text).error).toMatchObject({ type: 'upstream_error', message: expect.any(String) });
      expect(text).not.toContain(UPSTREAM_SECRET);
      expect(text).not.toContain('sk-upstream');
      // A call nobody answers is given up at its timeout, and says so.
      if (mode === 'hang') expect(JSON.parse(text).error.message).toBe('The model provider did not answer in time.');
      expect(upstream.requests.length).toBeGreaterThanOrEqual(1);
      expect(await gw.balance(acct)).toBe(10);
    });

    test(`${label} on a streamed call (before any byte) answers 502 upstream_error and charges nothing`, async () => {
      const { acct, openai } = await liveClient(10);
      upstream.setMode(mode);
      const err = await (async () => {
        const stream = await openai.chat.completions.create({ ...chatBody, stream: true });
        for await (const _ of stream) void _;
      })().catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err.status).toBe(502);
      expect(err.error).toMatchObject({ type: 'upstream_error' });
      expect(JSON.stringify(err.error) + String(err.message)).not.toContain(UPSTREAM_SECRET);
      expect(await gw.balance(acct)).toBe(10);
    });
  }

  // A Responses stream waits for the provider's first event before its 200, as a chat stream does:
  // LangChain reads a 200 that ends in response.failed as an empty answer, and the AI SDK sends a
  // refused request three times.
  const responsesFailures: [FakeOpenAIMode, number, Record<string, unknown>, string | null][] = [
    ['error-500', 502, { type: 'upstream_error' }, null],
    ['reset', 502, { type: 'upstream_error' }, null],
    ['rate-limited', 502, { type: 'upstream_error', code: 'upstream_rate_limited' }, '7'],
    ['bad-request', 400, { type: 'invalid_request_error' }, null],
  ];
  test.each(responsesFailures)(
    'a Responses stream whose upstream fails before its first byte (%s) is an HTTP %d, not a 200 stream; nothing charged',
    async (mode, status, error, retryAfter) => {
      const { acct, key, openai } = await liveClient(10);
      upstream.setMode(mode);
      const res = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'svc-chat-1', input: 'Say hello', stream: true }),
      });
      expect(res.status).toBe(status);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('retry-after')).toBe(retryAfter);
      const text = await res.text();
      expect(JSON.parse(text).error).toMatchObject(error);
      expect(text).not.toContain(UPSTREAM_SECRET);
      // The SDK raises it as the error it is, before any event.
      const err = await (async () => {
        for await (const _ of await openai.responses.create({ model: 'svc-chat-1', input: 'Say hello', stream: true })) void _;
      })().catch((e) => e);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect(err.status).toBe(status);
      await allCallsBilled(gw, acct.id);
      expect(await gw.balance(acct)).toBe(10);
    },
  );

  test('the SDK sees the 502 as an APIError with the upstream_error type', async () => {
    const { acct, openai } = await liveClient(10);
    upstream.setMode('error-500');
    const err = await openai.chat.completions.create(chatBody).catch((e) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.status).toBe(502);
    expect(err.error).toMatchObject({ type: 'upstream_error' });
    expect(String(err.message)).not.toContain(UPSTREAM_SECRET);
    expect(await gw.balance(acct)).toBe(10);
  });

  test('an upstream that dies mid-stream ends the stream with an upstream_error event, charging the prompt and what was relayed', async () => {
    const { acct, openai } = await liveClient(10);
    upstream.setMode('die-mid-stream');
    let text = '';
    const err = await (async () => {
      for await (const c of await openai.chat.completions.create({ ...chatBody, stream: true })) text += c.choices[0]?.delta?.content ?? '';
    })().catch((e) => e);
    expect(text).toBe(FAKE_CHAT_DELTAS[0] + FAKE_CHAT_DELTAS[1]);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.error).toMatchObject({ type: 'upstream_error' });
    const { heldMicro } = await settledHolds(acct);
    // As a client abort is: the prompt (our estimate) plus the relayed text's tokens, never more than the hold.
    const spent = 10 - (await gw.balance(acct));
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(heldMicro / 1_000_000);
    await expectLedgerInvariants(gw.gateway.database.db);
  });

  test('a Responses stream whose upstream dies mid-answer ends with response.failed (status failed, error code and message, the text so far), and nothing after it', async () => {
    const { openai } = await liveClient(10);
    upstream.setMode('die-mid-stream');
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const e of await openai.responses.create({ model: 'svc-chat-1', input: 'Say hello', stream: true })) events.push(e);
    expect(events.map((e) => e.type).filter((t) => t === 'response.failed' || t === 'error' || t === 'response.completed')).toEqual(['response.failed']);
    const last = events.at(-1)!;
    expect(last.type).toBe('response.failed');
    if (last.type !== 'response.failed') return;
    expect(last.sequence_number).toBe(events.length - 1);
    expect(last.response.status).toBe('failed');
    expect(last.response.error).toEqual({ code: 'server_error', message: expect.any(String) });
    expect(last.response.id).toBe(events[0].type === 'response.created' ? events[0].response.id : undefined);
    const text = last.response.output
      .flatMap((o) => (o.type === 'message' ? o.content : []))
      .map((c) => (c.type === 'output_text' ? c.text : ''))
      .join('');
    expect(text).toBe(FAKE_CHAT_DELTAS[0] + FAKE_CHAT_DELTAS[1]);
  });

  test('a stalled stream that the client aborts (SDK AbortController) is charged for what was sent, at most the hold', async () => {
    const { acct, openai } = await liveClient(10);
    upstream.setMode('stall-mid-stream');
    const abort = new AbortController();
    let text = '';
    const err = await (async () => {
      const stream = await openai.chat.completions.create({ ...chatBody, stream: true }, { signal: abort.signal });
      for await (const c of stream) {
        text += c.choices[0]?.delta?.content ?? '';
        if (text) abort.abort();
      }
    })().catch((e) => e);
    // The v6 SDK ends the iteration quietly on its own abort (older versions threw APIUserAbortError).
    if (err !== undefined) expect(err).toBeInstanceOf(OpenAI.APIUserAbortError);
    expect(abort.signal.aborted).toBe(true);
    expect(text).toBe(FAKE_CHAT_DELTAS[0]);
    const { heldMicro } = await settledHolds(acct);
    const spent = 10 - (await gw.balance(acct));
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(heldMicro / 1_000_000);
    await expectLedgerInvariants(gw.gateway.database.db);
  });

  test('a client that gives up before the upstream sent anything has its hold settled and is charged nothing', async () => {
    const { acct, key } = await liveClient(10);
    upstream.setMode('hang');
    const abort = new AbortController();
    const pending = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...chatBody, stream: true }),
      signal: abort.signal,
    }).catch((e) => e);
    await pollUntil(
      async () => upstream.requests.length,
      (n) => n > 0,
      10_000,
      10,
    );
    abort.abort();
    expect(await pending).toMatchObject({ name: 'AbortError' });
    await settledHolds(acct);
    // Not even its prompt estimate: no answer had begun and nothing was sent.
    expect(await gw.balance(acct)).toBe(10);
    await expectLedgerInvariants(gw.gateway.database.db);
  });

  test('a stalled stream that a raw fetch aborts after the first delta is charged the same way', async () => {
    const { acct, key } = await liveClient(10);
    upstream.setMode('stall-mid-stream');
    const abort = new AbortController();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...chatBody, stream: true }),
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes(JSON.stringify(FAKE_CHAT_DELTAS[0]))) {
      const { value, done } = await reader.read();
      if (done) throw new Error('stream ended before the first delta');
      seen += Buffer.from(value).toString('utf8');
    }
    abort.abort();
    const { heldMicro } = await settledHolds(acct);
    const spent = 10 - (await gw.balance(acct));
    expect(spent).toBeGreaterThan(0);
    expect(spent).toBeLessThanOrEqual(heldMicro / 1_000_000);
    await expectLedgerInvariants(gw.gateway.database.db);
  });
});

test("an upstream's 429 is the client's 502 with the upstream's Retry-After, plain and streamed; nothing charged", async () => {
  const { acct, key } = await liveClient(10);
  upstream.setMode('rate-limited');
  for (const stream of [false, true]) {
    const res = await gw.api('POST', '/v1/chat/completions', { token: key.secret, body: { ...chatBody, stream } });
    expect(res.status).toBe(502);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(res.body.error).toMatchObject({ type: 'upstream_error', code: 'upstream_rate_limited' });
  }
  await allCallsBilled(gw, acct.id);
  expect(await gw.balance(acct)).toBe(10);
});

test('an upstream that streams far past max_tokens is cut with an error event, and charged no more than the call allowed', async () => {
  const { acct, key } = await liveClient(10);
  upstream.setMode('runaway-stream');
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...chatBody, max_tokens: 10, stream: true }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  // Cut after about 64 characters a token allowed, not 2 MB later.
  expect(text.length).toBeLessThan(20_000);
  const events = text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));
  expect(JSON.parse(events.at(-1)!).error).toMatchObject({ type: 'upstream_error' });
  await allCallsBilled(gw, acct.id);
  // At 1 credit per 10k tokens: the prompt (a few tokens) and the 10 tokens allowed, not the 2 MB.
  const charged = 10 - (await gw.balance(acct));
  expect(charged).toBeGreaterThan(0);
  expect(charged).toBeLessThan(0.01);
});

describe('images through an OpenAI-compatible upstream', () => {
  /** A generation whose client gives up once the upstream holds its request (and its answer). */
  const leaveEarly = async (secret: string, headers: Record<string, string> = {}) => {
    const before = upstream.requests.length;
    const abort = new AbortController();
    const answer = fetch(`${gw.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'flux-pro', prompt: 'left early', size: '64x64' }),
      signal: abort.signal,
    }).then(
      () => 'answered',
      () => 'gave up',
    );
    await pollUntil(
      async () => upstream.requests.length,
      (n) => n > before,
      10_000,
      10,
    );
    abort.abort();
    return answer;
  };

  test('a client that leaves before its images cancels the call: nothing charged (nobody could fetch them)', async () => {
    const { acct, key } = await liveClient(20);
    upstream.setMode('held-json');
    expect(await leaveEarly(key.secret)).toBe('gave up');
    // The call is cancelled with its client: settled before the upstream has answered.
    await allCallsBilled(gw, acct.id);
    upstream.releaseHeld();
    expect(await gw.balance(acct)).toBe(20);
  });

  test('with an Idempotency-Key the call goes on: charged once, and the retry gets the images', async () => {
    const { acct, key } = await liveClient(20);
    upstream.setMode('held-json');
    expect(await leaveEarly(key.secret, { 'Idempotency-Key': 'images-left-early' })).toBe('gave up');
    upstream.releaseHeld();
    const retry = await pollUntil(
      () =>
        gw.api('POST', '/v1/images/generations', {
          token: key.secret,
          headers: { 'Idempotency-Key': 'images-left-early' },
          body: { model: 'flux-pro', prompt: 'left early', size: '64x64' },
        }),
      (r) => r.status !== 409,
      5_000,
      100,
    );
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.data).toHaveLength(1);
    expect(upstream.requests.filter((r) => r.path === '/v1/images/generations')).toHaveLength(1);
    expect(await gw.balance(acct)).toBe(20 - FLUX_PRO_PRICE);
  });

  test('generations are billed n × price, arrive as decodable PNGs, and the upstream got its model and key', async () => {
    const { acct, openai, key } = await liveClient(20);
    const res = await openai.images.generate({ model: 'flux-pro', prompt: 'a lighthouse at dusk', n: 2, size: '96x64', response_format: 'b64_json' });
    expect(res.data).toHaveLength(2);
    for (const item of res.data!) expect(decodePng(Buffer.from(item.b64_json!, 'base64'))).toEqual({ width: 96, height: 64 });
    expectUpstreamSaw('/v1/images/generations', 'up-flux-model');
    expect(upstream.requests[0].json).toMatchObject({ prompt: 'a lighthouse at dusk', n: 2, size: '96x64' });
    expectCallerKeyNotForwarded(key.secret);
    expect(await gw.balance(acct)).toBe(20 - 2 * FLUX_PRO_PRICE);
  });

  test('url images from the upstream are stored and served by the gateway', async () => {
    const { acct, openai } = await liveClient(10);
    const res = await openai.images.generate({ model: 'flux-pro', prompt: 'a fox', size: '80x64' });
    const url = res.data![0].url!;
    expect(url.startsWith(`${gw.url}/media/`)).toBe(true);
    const got = await fetch(url);
    expect(got.headers.get('content-type')).toBe('image/png');
    expect(decodePng(Buffer.from(await got.arrayBuffer()))).toEqual({ width: 80, height: 64 });
    expect(await gw.balance(acct)).toBe(10 - FLUX_PRO_PRICE);
  });

  test('edits arrive at the upstream as multipart with the image, the prompt and the upstream model', async () => {
    const { acct, openai } = await liveClient(10);
    const input = makePng(24, 16);
    const res = await openai.images.edit({
      model: 'svc-image-edit-1',
      image: await toFile(input, 'input.png', { type: 'image/png' }),
      prompt: 'make it blue',
      size: '128x64',
      response_format: 'b64_json',
    });
    expect(decodePng(Buffer.from(res.data![0].b64_json!, 'base64'))).toEqual({ width: 128, height: 64 });
    expectUpstreamSaw('/v1/images/edits', 'up-edit-model');
    const r = upstream.requests[0];
    expect(r.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const part = (name: string) => r.parts!.find((p) => p.name === name);
    expect(part('prompt')?.data.toString()).toBe('make it blue');
    expect(part('image')).toMatchObject({ filename: 'input.png', contentType: 'image/png' });
    expect(part('image')!.data.equals(input)).toBe(true);
    expect(await gw.balance(acct)).toBe(10 - EDIT_PRICE);
  });

  test('a content-policy 400 from the upstream answers 422 content_policy_violation and charges nothing', async () => {
    const { acct, openai } = await liveClient(10);
    upstream.setMode('content-policy');
    await expect(openai.images.generate({ model: 'flux-pro', prompt: 'something refused', size: '64x64' })).rejects.toMatchObject({
      status: 422,
      error: { type: 'content_policy_violation' },
    });
    await expect(
      openai.images.edit({ model: 'svc-image-edit-1', image: await toFile(makePng(8, 8), 'a.png', { type: 'image/png' }), prompt: 'refused' }),
    ).rejects.toMatchObject({ status: 422, error: { type: 'content_policy_violation' } });
    expect(upstream.requests).toHaveLength(2);
    expect(await gw.balance(acct)).toBe(10);
  });

  for (const mode of ['error-500', 'malformed-json', 'reset', 'hang'] as const) {
    test(`images: ${mode} answers 502 upstream_error, charges nothing, never shows the upstream key`, async () => {
      const { acct, openai } = await liveClient(10);
      upstream.setMode(mode);
      const err = await openai.images.generate({ model: 'flux-pro', prompt: 'x', size: '64x64' }).catch((e) => e);
      expect(err.status).toBe(502);
      expect(err.error).toMatchObject({ type: 'upstream_error' });
      expect(JSON.stringify(err.error) + String(err.message)).not.toContain(UPSTREAM_SECRET);
      expect(await gw.balance(acct)).toBe(10);
    });
  }
});
