import type { DomainError } from '../../../src/domain/errors/domain-error';
import { OpenAICompatibleProvider } from '../../../src/providers/openai-compatible';
import type { ChatRequest, ChatStreamEvent } from '../../../src/providers/ports';
import { type FakeOpenAIMode, type FakeOpenAIUpstream, startFakeOpenAIUpstream } from '../../support/fake-openai-upstream';
import { pollUntil } from '../../support/poll';

const API_KEY = 'sk-upstream-secret-789';
const TIMEOUT_MS = 300;
/** What a call the provider gave up on at its timeout (and only that) is answered. */
const TIMED_OUT = 'The model provider did not answer in time.';

const chat: ChatRequest = {
  upstreamModel: 'up-chat',
  publicModel: 'svc-chat-1',
  messages: [{ role: 'user', content: 'Hi' }],
  maxTokens: 20,
  maxTokensParam: 'max_tokens',
  n: 1,
  options: {},
};
const delta = (text: string) => ({ type: 'chunk', choices: [{ index: 0, delta: { content: text }, finishReason: null }] });
const image = { upstreamModel: 'up-image', prompt: 'x', n: 1, width: 8, height: 8, creative: false };
const edit = {
  upstreamModel: 'up-edit',
  prompt: 'x',
  images: [{ data: Buffer.from('img'), filename: 'a.png', contentType: 'image/png' }],
  n: 1,
};

/** Runs a stream to its end; returns what it yielded and what it threw. */
async function drain(stream: AsyncIterable<ChatStreamEvent>): Promise<{ events: ChatStreamEvent[]; error?: DomainError }> {
  const events: ChatStreamEvent[] = [];
  try {
    for await (const event of stream) events.push(event);
  } catch (error) {
    return { events, error: error as DomainError };
  }
  return { events };
}

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('expected a rejection');
}

function expectClean(error: DomainError | undefined, type: string) {
  expect(error).toBeDefined();
  expect(error!.type).toBe(type);
  expect(error!.message).not.toContain(API_KEY);
  expect(error!.message).not.toContain('Internal error for');
  expect(JSON.stringify(error)).not.toContain(API_KEY);
}

describe('OpenAICompatibleProvider failures', () => {
  let upstream: FakeOpenAIUpstream;
  let provider: OpenAICompatibleProvider;

  beforeAll(async () => {
    upstream = await startFakeOpenAIUpstream();
    provider = new OpenAICompatibleProvider({ baseUrl: upstream.url, apiKey: API_KEY, timeoutMs: TIMEOUT_MS });
  });
  afterAll(async () => {
    await provider.close();
    await upstream.close();
  });

  describe.each<FakeOpenAIMode>(['error-500', 'malformed-json', 'reset'])('upstream mode %s', (mode) => {
    beforeEach(() => upstream.setMode(mode));

    it('chat completion → upstream_error', async () => {
      expectClean(await rejection(provider.complete(chat)), 'upstream_error');
    });

    it('image generation → upstream_error', async () => {
      expectClean(await rejection(provider.generate(image)), 'upstream_error');
    });

    it('image edit → upstream_error', async () => {
      expectClean(await rejection(provider.edit(edit)), 'upstream_error');
    });

    it('chat stream → upstream_error', async () => {
      const { events, error } = await drain(provider.stream(chat));
      expect(events).toEqual([]);
      expectClean(error, 'upstream_error');
    });
  });

  it('keeps the upstream body out of the message but attaches it as cause', async () => {
    upstream.setMode('error-500');
    const error = await rejection(provider.complete(chat));
    expect(error.message).toBe('The model provider failed to answer.');
    expect(error.cause).toMatchObject({ status: 500 });
  });

  it('honours timeoutMs on a JSON call', async () => {
    upstream.setMode('hang');
    const error = await rejection(provider.complete(chat));
    expectClean(error, 'upstream_error');
    expect(error.message).toBe(TIMED_OUT);
  });

  it('honours timeoutMs before the first byte of a stream', async () => {
    upstream.setMode('hang');
    const { events, error } = await drain(provider.stream(chat));
    expect(events).toEqual([]);
    expectClean(error, 'upstream_error');
    expect(error!.message).toBe(TIMED_OUT);
  });

  it('ends a stream that goes silent mid-answer with upstream_error after the deltas sent', async () => {
    upstream.setMode('stall-mid-stream');
    const { events, error } = await drain(provider.stream(chat));
    expect(events).toEqual([delta('Hel')]);
    expectClean(error, 'upstream_error');
  });

  it('ends a stream whose connection dies mid-answer with upstream_error after the deltas sent', async () => {
    upstream.setMode('die-mid-stream');
    const { events, error } = await drain(provider.stream(chat));
    expect(events).toEqual([delta('Hel'), delta('lo')]);
    expectClean(error, 'upstream_error');
  });

  it('aborts when the caller signal aborts', async () => {
    upstream.setMode('hang');
    const patient = new OpenAICompatibleProvider({ baseUrl: upstream.url, timeoutMs: 60_000 });
    // Each aborted once the upstream holds its request (it never answers, and the timeout is a minute away).
    const arrived = async (n: number) => {
      await pollUntil(
        async () => upstream.requests.length,
        (count) => count >= n,
        10_000,
        10,
      );
    };
    const before = upstream.requests.length;
    const controller = new AbortController();
    const pending = rejection(patient.complete({ ...chat, signal: controller.signal }));
    await arrived(before + 1);
    controller.abort();
    const error = await pending;
    expect(error.type).toBe('upstream_error');
    expect(error.message).not.toBe(TIMED_OUT);
    const streamController = new AbortController();
    const streaming = drain(patient.stream({ ...chat, signal: streamController.signal }));
    await arrived(before + 2);
    streamController.abort();
    const { error: streamError } = await streaming;
    expect(streamError?.type).toBe('upstream_error');
    expect(streamError?.message).not.toBe(TIMED_OUT);
    await patient.close();
  });

  describe('content policy', () => {
    beforeEach(() => upstream.setMode('content-policy'));

    it('maps a 400 content_policy_violation on generation', async () => {
      expectClean(await rejection(provider.generate(image)), 'content_policy_violation');
    });

    it('maps a 400 content_policy_violation on edits and chat', async () => {
      expectClean(await rejection(provider.edit(edit)), 'content_policy_violation');
      expectClean(await rejection(provider.complete(chat)), 'content_policy_violation');
      expectClean((await drain(provider.stream(chat))).error, 'content_policy_violation');
    });
  });

  it('fails fast with upstream_error when nothing listens', async () => {
    const closed = await startFakeOpenAIUpstream();
    await closed.close();
    const orphan = new OpenAICompatibleProvider({ baseUrl: closed.url, apiKey: API_KEY, timeoutMs: TIMEOUT_MS });
    expectClean(await rejection(orphan.complete(chat)), 'upstream_error');
    expectClean((await drain(orphan.stream(chat))).error, 'upstream_error');
    await orphan.close();
  });
});
