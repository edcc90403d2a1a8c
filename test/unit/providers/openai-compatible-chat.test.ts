import OpenAI from 'openai';
import { OpenAICompatibleProvider } from '../../../src/providers/openai-compatible';
import type { ChatRequest, ChatStreamEvent } from '../../../src/providers/ports';
import { FAKE_CHAT_DELTAS, FAKE_CHAT_REPLY, type FakeOpenAIUpstream, startFakeOpenAIUpstream } from '../../support/fake-openai-upstream';

const API_KEY = 'sk-upstream-secret-123';

const chatRequest = (overrides: Partial<ChatRequest> = {}): ChatRequest => ({
  upstreamModel: 'up-chat',
  publicModel: 'svc-chat-1',
  maxTokensParam: 'max_tokens',
  n: 1,
  options: { temperature: 0.5, seed: 7 },
  messages: [
    { role: 'developer', content: 'Be brief.' },
    { role: 'user', content: 'Hi' },
  ],
  maxTokens: 50,
  ...overrides,
});

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('OpenAICompatibleProvider chat', () => {
  let upstream: FakeOpenAIUpstream;
  let provider: OpenAICompatibleProvider;

  beforeAll(async () => {
    upstream = await startFakeOpenAIUpstream();
    provider = new OpenAICompatibleProvider({ baseUrl: upstream.url, apiKey: API_KEY, timeoutMs: 2000 });
  });
  afterAll(async () => {
    await provider.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.setMode('ok');
    upstream.requests.length = 0;
  });

  it('completes a chat and maps content, finish reason and usage', async () => {
    const result = await provider.complete(chatRequest());
    expect(result).toEqual({
      choices: [{ index: 0, message: { role: 'assistant', content: FAKE_CHAT_REPLY, refusal: null }, finishReason: 'stop', logprobs: null }],
      usage: { promptTokens: 7, completionTokens: 3 },
    });

    const [sent] = upstream.requests;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.json).toEqual({
      model: 'up-chat',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      max_tokens: 50,
      temperature: 0.5,
      seed: 7,
    });
  });

  it('streams deltas split across network chunks, then one finish with the final usage', async () => {
    const events = await collect(provider.stream(chatRequest()));
    const deltas = events.flatMap((e) => (e.type === 'chunk' ? e.choices.map((c) => c.delta.content).filter(Boolean) : []));
    expect(deltas).toEqual(FAKE_CHAT_DELTAS);
    expect(deltas.join('')).toBe(FAKE_CHAT_REPLY);
    expect(events.at(-1)).toEqual({ type: 'finish', usage: { promptTokens: 7, completionTokens: 3 } });
    expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);

    const [sent] = upstream.requests;
    expect(sent.json).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(sent.headers.accept).toBe('text/event-stream');
  });

  it('accepts a stream that ends cleanly after its finish reason without [DONE]', async () => {
    upstream.setMode('stream-without-done');
    const events = await collect(provider.stream(chatRequest()));
    expect(events.at(-1)).toEqual({ type: 'finish', usage: { promptTokens: 7, completionTokens: 3 } });
  });

  it('finishes a stream whose upstream keeps the response open after [DONE]', async () => {
    upstream.setMode('linger-after-done');
    const events = await collect(provider.stream(chatRequest()));
    expect(events.at(-1)).toEqual({ type: 'finish', usage: { promptTokens: 7, completionTokens: 3 } });
  });

  it('relays a JSON answer to a stream request as one delta', async () => {
    upstream.setMode('ignore-stream');
    const events = await collect(provider.stream(chatRequest()));
    expect(events).toEqual([
      { type: 'chunk', choices: [{ index: 0, delta: { role: 'assistant', content: FAKE_CHAT_REPLY }, finishReason: 'stop', logprobs: null }] },
      { type: 'finish', usage: { promptTokens: 7, completionTokens: 3 } },
    ]);
  });

  it('reuses one keep-alive connection across calls', async () => {
    const before = upstream.connections;
    for (let i = 0; i < 3; i++) {
      await provider.complete(chatRequest());
      await collect(provider.stream(chatRequest()));
    }
    expect(upstream.connections - before).toBeLessThanOrEqual(1);
  });

  it('stops the upstream response when the consumer stops early', async () => {
    for await (const event of provider.stream(chatRequest())) {
      expect(event.type).toBe('chunk');
      break;
    }
    // The adapter is still usable afterwards.
    await expect(provider.complete(chatRequest())).resolves.toMatchObject({ choices: [{ message: { content: FAKE_CHAT_REPLY } }] });
  });

  it('fake upstream speaks the protocol the official OpenAI SDK reads', async () => {
    const client = new OpenAI({ baseURL: upstream.url, apiKey: API_KEY, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'up-chat',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(FAKE_CHAT_REPLY);
    expect(usage).toMatchObject({ prompt_tokens: 7, completion_tokens: 3 });
  });
});
