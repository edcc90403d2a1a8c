/**
 * The chat service on its own, over in-memory fakes: a completed call is charged its usage once
 * (its hold committed at the real cost), a failed one nothing (its hold released), a refusal
 * never reaches the provider, and a stream is charged as docs/money.md says: nothing when it
 * fails or is cut before its first event, its prompt and what was relayed when it is cut after.
 */
import { ChatService } from '../../../src/domain/chat/chat-service';
import type { ChatStreamItem } from '../../../src/domain/chat/chat-service';
import { countTokens } from '../../../src/domain/chat/tokens';
import { DomainError, upstreamError } from '../../../src/domain/errors/domain-error';
import { RATE_LIMITS } from '../../../src/domain/ratelimit/rate-limiter';
import { CallAbort } from '../../../src/domain/shared/call-signal';
import { dailyCapSpent, fakeBilling } from '../../support/fakes/billing';
import { CHAT_DEFAULT_MAX_TOKENS, CHAT_MICRO_PER_TOKEN as PER_TOKEN, testCatalog } from '../../support/fakes/catalog';
import { FakeChatProviders, finish, stopChunk, textAnswer, textChunk } from '../../support/fakes/chat-provider';
import { liveKey, testKey } from '../../support/fakes/principals';
import { FakeRateLimiter } from '../../support/fakes/rate-limiter';
import { FakeUrlGuard } from '../../support/fakes/url-guard';

function setup(options: { balanceCredits?: number; chatLimit?: number; refusedHosts?: string[] } = {}) {
  const { billing, book, streams } = fakeBilling({ balanceCredits: options.balanceCredits });
  const providers = new FakeChatProviders();
  const limiter = new FakeRateLimiter({ ...RATE_LIMITS, chat: options.chatLimit ?? RATE_LIMITS.chat });
  const chat = new ChatService(testCatalog(), providers, billing, limiter, new FakeUrlGuard(options.refusedHosts));
  return { chat, book, streams, limiter, provider: providers.live, simulator: providers.test };
}

const ask = (extra: Record<string, unknown> = {}) => ({ model: 'chat-a', messages: [{ role: 'user', content: 'Tell me a short story.' }], ...extra });

/** The prompt estimate the service holds credits for, asked of a service of its own. */
const estimateOf = (body: unknown) => setup().chat.countPromptTokens(liveKey(), body);

/** docs/money.md: the prompt estimate × 1.25 + 16 tokens, plus max_tokens × n. */
const holdFor = (estimate: number, maxTokens: number, n = 1) => (Math.ceil(estimate * 1.25) + 16 + maxTokens * n) * PER_TOKEN;

async function collect(items: AsyncGenerator<ChatStreamItem>): Promise<ChatStreamItem[]> {
  const out: ChatStreamItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('a completed call', () => {
  test('is charged the usage its provider reports, once: its hold, placed before the call, committed at the real cost', async () => {
    const { chat, book, provider } = setup({ balanceCredits: 10 });
    provider.answers(textAnswer('Once upon a time.', { promptTokens: 12, completionTokens: 30 }));
    const body = ask({ max_tokens: 100, n: 2 });
    const estimate = await estimateOf(body);

    const out = await chat.complete(liveKey(), body);

    expect(out.usage).toEqual({ promptTokens: 12, completionTokens: 30 });
    expect(out.costCredits).toBe(0.042);
    expect(book.holds).toEqual([{ keyId: liveKey().keyId, amountMicro: holdFor(estimate, 100, 2) }]);
    expect(book.commits).toEqual([{ requestId: out.id, model: 'chat-a', heldMicro: holdFor(estimate, 100, 2), costMicro: 42_000, chargedMicro: 42_000 }]);
    expect(book.releases).toEqual([]);
    expect(book.balanceMicro).toBe(10_000_000 - 42_000);
    expect(out.id).toMatch(/^chatcmpl-/);
    expect(provider.requests).toHaveLength(1);
    expect(provider.requests[0]).toMatchObject({ upstreamModel: 'upstream-chat-a', publicModel: 'chat-a', maxTokens: 100, n: 2 });
  });

  test("a request without max_tokens holds, and asks the provider for, the model's default", async () => {
    const { chat, book, provider } = setup();
    provider.answers(textAnswer('Hi.', { promptTokens: 5, completionTokens: 2 }));
    const estimate = await estimateOf(ask());
    await chat.complete(liveKey(), ask());
    expect(book.holds[0].amountMicro).toBe(holdFor(estimate, CHAT_DEFAULT_MAX_TOKENS));
    expect(provider.requests[0].maxTokens).toBe(CHAT_DEFAULT_MAX_TOKENS);
  });

  test('a report above the hold is charged in full, the excess from the balance', async () => {
    const { chat, book, provider } = setup({ balanceCredits: 10 });
    const body = ask({ max_tokens: 10 });
    const estimate = await estimateOf(body);
    // Within what a report may say (4 × the estimate + 16,384 prompt tokens), far above what was held.
    provider.answers(textAnswer('Done.', { promptTokens: estimate * 3 + 100, completionTokens: 10 }));
    const out = await chat.complete(liveKey(), body);
    const cost = (estimate * 3 + 110) * PER_TOKEN;
    expect(cost).toBeGreaterThan(holdFor(estimate, 10));
    expect(book.commits).toEqual([expect.objectContaining({ costMicro: cost, chargedMicro: cost })]);
    expect(out.costCredits).toBe(cost / 1_000_000);
    expect(book.balanceMicro).toBe(10_000_000 - cost);
  });

  test('a provider that reports no usage: charged the prompt estimate and the tokens of its answer', async () => {
    const { chat, book, provider } = setup();
    const answer = 'A lighthouse keeper counted the waves every night.';
    provider.answers(textAnswer(answer));
    const estimate = await estimateOf(ask());
    const out = await chat.complete(liveKey(), ask());
    const tokens = estimate + countTokens(answer);
    expect(out.usage).toEqual({ promptTokens: estimate, completionTokens: countTokens(answer) });
    expect(book.commits.map((c) => c.costMicro)).toEqual([tokens * PER_TOKEN]);
  });

  test('a test key is served by the simulator and moves no credit, but says what the call would have cost', async () => {
    const { chat, book, provider, simulator } = setup();
    simulator.answers(textAnswer('Simulated.', { promptTokens: 20, completionTokens: 5 }));
    const out = await chat.complete(testKey(), ask());
    expect(out.costCredits).toBe(0.025);
    expect(simulator.requests).toHaveLength(1);
    expect(provider.requests).toHaveLength(0);
    expect([book.holds, book.commits, book.releases]).toEqual([[], [], []]);
  });

  test('a retry whose first run was charged is answered with that charge: not counted, held or charged again', async () => {
    const { chat, book, limiter, provider } = setup();
    book.recordCharge('chatcmpl-first', 42_000);
    provider.answers(textAnswer('Again.', { promptTokens: 50, completionTokens: 50 }));
    const out = await chat.complete(liveKey(), ask(), undefined, { id: 'first', resumed: true });
    expect(out.id).toBe('chatcmpl-first');
    expect(out.costCredits).toBe(0.042);
    expect([book.holds, book.commits, limiter.consumed]).toEqual([[], [], []]);
  });

  test('a call under an Idempotency-Key whose first run charged nothing is admitted and charged as the same call', async () => {
    const { chat, book, limiter, provider } = setup();
    provider.answers(textAnswer('Now.', { promptTokens: 10, completionTokens: 10 }));
    const out = await chat.complete(liveKey(), ask(), undefined, { id: 'first', resumed: true });
    expect(out.id).toBe('chatcmpl-first');
    expect(book.commits).toEqual([expect.objectContaining({ requestId: 'chatcmpl-first', costMicro: 20_000 })]);
    expect(limiter.consumed).toHaveLength(1);
  });
});

describe('a failed call', () => {
  test('an upstream failure is the answer, charges nothing and gives its hold back', async () => {
    const { chat, book, provider } = setup({ balanceCredits: 10 });
    const failure = new DomainError('upstream_error', 'The model provider is rate limiting requests.', { code: 'upstream_rate_limited', retryAfterSeconds: 7 });
    provider.fails(failure);
    await expect(chat.complete(liveKey(), ask())).rejects.toBe(failure);
    expect(book.holds).toHaveLength(1);
    expect(book.commits).toEqual([]);
    expect(book.releases).toEqual([book.holds[0].amountMicro]);
    expect(book.balanceMicro).toBe(10_000_000);
  });
});

describe('a refused call never reaches the provider', () => {
  test('a balance that does not cover the hold: 402', async () => {
    const { chat, book, provider } = setup({ balanceCredits: 0.0001 });
    await expect(chat.complete(liveKey(), ask())).rejects.toMatchObject({ type: 'insufficient_credits' });
    expect([provider.requests, book.holds]).toEqual([[], []]);
  });

  test("a key's daily cap spent: 429 daily_cap_exceeded", async () => {
    const { chat, book, provider } = setup();
    book.refusal = dailyCapSpent();
    await expect(chat.complete(liveKey(), ask())).rejects.toMatchObject({ type: 'daily_cap_exceeded' });
    await expect(chat.stream(liveKey(), ask({ stream: true }), new CallAbort())).rejects.toMatchObject({ type: 'daily_cap_exceeded' });
    expect([provider.requests, book.holds]).toEqual([[], []]);
  });

  test('past the rate limit: 429 rate_limit_exceeded with the x-ratelimit headers, and nothing held', async () => {
    const { chat, book, provider } = setup({ chatLimit: 1 });
    const first = await chat.complete(liveKey(), ask());
    expect(first.headers).toEqual({ 'x-ratelimit-limit-requests': '1', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '60s' });
    const refusal = chat.complete(liveKey(), ask());
    await expect(refusal).rejects.toMatchObject({ type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', retryAfterSeconds: 60 });
    await expect(refusal).rejects.toHaveProperty('headers.x-ratelimit-remaining-requests', '0');
    expect(provider.requests).toHaveLength(1);
    expect(book.holds).toHaveLength(1);
  });

  test.each([
    ['an unknown model', ask({ model: 'chat-z' }), liveKey(), { type: 'not_found_error', code: 'model_not_found', param: 'model' }],
    ['a model of another kind', ask({ model: 'image-a' }), liveKey(), { type: 'not_found_error', code: 'model_not_found', param: 'model' }],
    ['a model the key blocks', ask(), liveKey({ blockedModels: ['chat-a'] }), { type: 'model_forbidden', param: 'model' }],
    ['a model outside the key’s allowed list', ask(), liveKey({ allowedModels: ['chat-b'] }), { type: 'model_forbidden', param: 'model' }],
    ['max_tokens past the model’s output', ask({ max_tokens: 5000 }), liveKey(), { type: 'invalid_request_error', param: 'max_tokens' }],
    ['an unknown field', ask({ temprature: 1 }), liveKey(), { type: 'invalid_request_error', param: 'temprature' }],
  ])('%s: refused before any rate count or hold', async (_what, body, key, refusal) => {
    const { chat, book, limiter, provider } = setup();
    await expect(chat.complete(key, body)).rejects.toMatchObject(refusal);
    await expect(chat.stream(key, { ...body, stream: true }, new CallAbort())).rejects.toMatchObject(refusal);
    expect([provider.requests, book.holds, limiter.consumed]).toEqual([[], [], []]);
  });

  test('an image part whose address the URL check refuses: 400 naming the part, nothing held', async () => {
    const { chat, book, provider } = setup({ refusedHosts: ['169.254.169.254'] });
    const content = [
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: 'http://169.254.169.254/latest/meta-data' } },
    ];
    await expect(chat.complete(liveKey(), ask({ messages: [{ role: 'user', content }] }))).rejects.toMatchObject({
      type: 'invalid_request_error',
      param: 'messages[0].content[1].image_url.url',
    });
    expect([provider.requests, book.holds]).toEqual([[], []]);
  });
});

describe('a stream', () => {
  test('that completes is charged its reported usage once; it counts as answering from its first event', async () => {
    const { chat, book, streams, provider } = setup();
    provider.streams([textChunk('Once'), textChunk(' upon a time.'), stopChunk(), finish({ promptTokens: 12, completionTokens: 4 })]);
    const { info, items } = await chat.stream(liveKey(), ask({ stream: true }), new CallAbort());
    expect(book.holds).toHaveLength(1);
    expect(streams.running.size).toBe(0);

    const first = await items.next();
    expect(first.value).toEqual(textChunk('Once'));
    expect(streams.running.get(info.id)?.opening).toMatchObject({ requestId: info.id, keyId: liveKey().keyId, accountId: 'acct_a', model: 'chat-a' });

    const rest = await collect(items);
    expect(rest.at(-1)).toEqual({ type: 'finish', usage: { promptTokens: 12, completionTokens: 4 }, costCredits: 0.016 });
    expect(book.commits).toEqual([expect.objectContaining({ requestId: info.id, costMicro: 16_000 })]);
    expect(book.releases).toEqual([]);
    expect(streams.settledIds).toEqual([info.id]);
  });

  test('whose provider reports no usage is charged its prompt and what it relayed', async () => {
    const { chat, book, provider } = setup();
    provider.streams([textChunk('Once'), textChunk(' upon a time.'), finish()]);
    const body = ask({ stream: true });
    const estimate = await estimateOf(body);
    const { items } = await chat.stream(liveKey(), body, new CallAbort());
    const out = await collect(items);
    const owed = { promptTokens: estimate, completionTokens: countTokens('Once upon a time.') };
    expect(out.at(-1)).toEqual({ type: 'finish', usage: owed, costCredits: ((owed.promptTokens + owed.completionTokens) * PER_TOKEN) / 1_000_000 });
    expect(book.commits.map((c) => c.costMicro)).toEqual([(owed.promptTokens + owed.completionTokens) * PER_TOKEN]);
  });

  test('that fails before its first event is an ordinary error, charges nothing and gives its hold back', async () => {
    const { chat, book, streams, provider } = setup();
    const failure = upstreamError('The model provider failed to answer.');
    provider.streams([], { fail: failure });
    const { items } = await chat.stream(liveKey(), ask({ stream: true }), new CallAbort());
    await expect(items.next()).rejects.toBe(failure);
    expect(book.commits).toEqual([]);
    expect(book.releases).toEqual([book.holds[0].amountMicro]);
    expect(streams.running.size).toBe(0);
  });

  test('cut (the client gone) before the provider’s first event ends without a word and charges nothing', async () => {
    const { chat, book, provider } = setup();
    provider.streams([], 'until-aborted');
    const signal = new CallAbort();
    const { items } = await chat.stream(liveKey(), ask({ stream: true }), signal);
    const next = items.next();
    signal.abort();
    await expect(next).resolves.toEqual({ done: true, value: undefined });
    expect(book.commits).toEqual([]);
    expect(book.releases).toEqual([book.holds[0].amountMicro]);
  });

  test('whose client leaves after it started is charged its prompt and what was sent, once', async () => {
    const { chat, book, streams, provider } = setup();
    provider.streams([textChunk('Once upon'), textChunk(' a time'), textChunk(' there was')], 'until-aborted');
    const body = ask({ stream: true });
    const estimate = await estimateOf(body);
    const signal = new CallAbort();
    const { info, items } = await chat.stream(liveKey(), body, signal);
    await items.next();
    // Should this instance die now, its lease's close charges what the stream has relayed so far.
    expect(streams.owedNow(info.id)).toBe((estimate + countTokens('Once upon')) * PER_TOKEN);
    await items.next();
    expect(streams.owedNow(info.id)).toBe((estimate + countTokens('Once upon a time')) * PER_TOKEN);

    // As the door does when its client goes: abort the call and stop reading.
    signal.abort();
    await items.return(undefined);

    expect(book.commits).toEqual([expect.objectContaining({ requestId: info.id, costMicro: (estimate + countTokens('Once upon a time')) * PER_TOKEN })]);
    expect(book.releases).toEqual([]);
    expect(streams.settledIds).toEqual([info.id]);
  });

  test('aborted while waiting on its provider after it started: the provider stops, and the stream is charged what was sent', async () => {
    const { chat, book, provider } = setup();
    provider.streams([textChunk('Once upon a time')], 'until-aborted');
    const body = ask({ stream: true });
    const estimate = await estimateOf(body);
    const signal = new CallAbort();
    const { items } = await chat.stream(liveKey(), body, signal);
    await items.next();
    const next = items.next();
    signal.abort();
    await expect(next).resolves.toEqual({ done: true, value: undefined });
    expect(book.commits.map((c) => c.costMicro)).toEqual([(estimate + countTokens('Once upon a time')) * PER_TOKEN]);
  });

  test('whose upstream dies after relaying part of it fails, charged its prompt and what was relayed', async () => {
    const { chat, book, provider } = setup();
    const failure = upstreamError('The model provider failed to answer.');
    provider.streams([textChunk('Once upon a time')], { fail: failure });
    const body = ask({ stream: true });
    const estimate = await estimateOf(body);
    const { items } = await chat.stream(liveKey(), body, new CallAbort());
    await items.next();
    await expect(items.next()).rejects.toBe(failure);
    expect(book.commits.map((c) => c.costMicro)).toEqual([(estimate + countTokens('Once upon a time')) * PER_TOKEN]);
    expect(book.releases).toEqual([]);
  });

  test('whose upstream writes far past max_tokens is cut and charged within max_tokens', async () => {
    const { chat, book, provider } = setup();
    provider.streams([textChunk('word '.repeat(400)), finish({ promptTokens: 1, completionTokens: 1 })]);
    const body = ask({ stream: true, max_tokens: 1 });
    const estimate = await estimateOf(body);
    const { items } = await chat.stream(liveKey(), body, new CallAbort());
    await expect(items.next()).rejects.toMatchObject({ type: 'upstream_error' });
    expect(book.commits.map((c) => c.costMicro)).toEqual([(estimate + 1) * PER_TOKEN]);
  });

  test('of a test key moves no credit and registers no stream start', async () => {
    const { chat, book, streams, simulator } = setup();
    simulator.streams([textChunk('Simulated.'), finish({ promptTokens: 20, completionTokens: 5 })]);
    const { items } = await chat.stream(testKey(), ask({ stream: true }), new CallAbort());
    const out = await collect(items);
    expect(out.at(-1)).toMatchObject({ type: 'finish', costCredits: 0.025 });
    expect([book.holds, book.commits, streams.running.size]).toEqual([[], [], 0]);
  });
});
