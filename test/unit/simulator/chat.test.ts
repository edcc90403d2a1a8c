import { SimulatorChatProvider } from '../../../src/providers/simulator';
import type { ChatRequest, ChatStreamEvent } from '../../../src/providers/ports';
import { countTokens } from '../../../src/domain/chat/tokens';
import { estimatePromptTokens } from '../../../src/domain/chat/prompt-tokens';
import { SIMULATED_COMPLETION_TOKENS } from '../../../src/providers/simulator/chat-plan';

const provider = new SimulatorChatProvider();

type Overrides = Partial<ChatRequest> & { seed?: number; stop?: string[] };

function request({ seed, stop, ...overrides }: Overrides = {}): ChatRequest {
  return {
    upstreamModel: 'sim-chat',
    publicModel: 'svc-chat-1',
    maxTokensParam: 'max_tokens',
    n: 1,
    options: { ...(seed === undefined ? {} : { seed }), ...(stop === undefined ? {} : { stop }) },
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Tell me about   the\nmoon, please.' },
    ],
    maxTokens: 1000,
    ...overrides,
  };
}

/** The first choice's text and finish reason, as the old single-choice shape. */
async function answer(req: ChatRequest) {
  const result = await provider.complete(req);
  return { content: result.choices[0].message.content ?? '', finishReason: result.choices[0].finishReason, usage: result.usage };
}

const textOf = (e: ChatStreamEvent) => (e.type === 'chunk' ? e.choices.map((c) => c.delta.content ?? '').join('') : '');

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('SimulatorChatProvider.complete', () => {
  it('is deterministic and echoes the last user message', async () => {
    const a = await answer(request());
    const b = await answer(request());
    expect(a).toEqual(b);
    expect(a.content).toContain('Tell me about the moon, please.');
    expect(a.finishReason).toBe('stop');
  });

  it('reports honest usage', async () => {
    const req = request();
    const result = await provider.complete(req);
    expect(result.usage.promptTokens).toBe(estimatePromptTokens(req.messages, req.options));
    expect(result.usage.completionTokens).toBe(countTokens(result.choices[0].message.content ?? ''));
    expect(result.usage.completionTokens).toBeGreaterThan(10);
  });

  it('changes with the seed and with the messages, and stays reproducible per seed', async () => {
    const contents = new Set<string>();
    for (let seed = 0; seed < 20; seed++) contents.add((await answer(request({ seed }))).content);
    expect(contents.size).toBeGreaterThan(5);
    expect((await answer(request({ seed: 7 }))).content).toBe((await answer(request({ seed: 7 }))).content);
    const other = await answer(request({ messages: [{ role: 'user', content: 'Something else' }] }));
    expect(other.content).toContain('Something else');
  });

  it('truncates to maxTokens with finishReason length', async () => {
    const full = await answer(request());
    for (const maxTokens of [0, 1, 2, 5, full.usage.completionTokens - 1]) {
      const cut = await answer(request({ maxTokens }));
      expect(cut.finishReason).toBe('length');
      expect(cut.usage.completionTokens).toBe(maxTokens);
      expect(countTokens(cut.content)).toBe(maxTokens);
      expect(full.content.startsWith(cut.content)).toBe(true);
    }
    const exact = await answer(request({ maxTokens: full.usage.completionTokens }));
    expect(exact.finishReason).toBe('stop');
    expect(exact.content).toBe(full.content);
  });

  it('cuts at a stop sequence', async () => {
    const full = await answer(request());
    const stop = full.content.slice(20, 24);
    const cut = await answer(request({ stop: [stop] }));
    expect(cut.content).toBe(full.content.slice(0, full.content.indexOf(stop)));
    expect(cut.finishReason).toBe('stop');
  });

  it('rejects when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(provider.complete(request({ signal: controller.signal }))).rejects.toThrow();
  });
});

describe('SimulatorChatProvider.stream', () => {
  it('streams several deltas that join to the non-streamed content, then one finish', async () => {
    const full = await answer(request());
    const events = await collect(provider.stream(request()));
    const deltas = events.filter((e) => textOf(e) !== '');
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(events.map(textOf).join('')).toBe(full.content);
    const last = events[events.length - 1];
    expect(events.filter((e) => e.type === 'finish')).toHaveLength(1);
    expect(events.at(-2)).toEqual({ type: 'chunk', choices: [{ index: 0, delta: {}, finishReason: 'stop' }] });
    expect(last).toEqual({ type: 'finish', usage: full.usage });
  });

  it('streams the truncated reply when maxTokens is small', async () => {
    const events = await collect(provider.stream(request({ maxTokens: 4 })));
    const text = events.map(textOf).join('');
    expect(countTokens(text)).toBe(4);
    expect(events.at(-2)).toMatchObject({ choices: [{ finishReason: 'length' }] });
    expect(events[events.length - 1]).toMatchObject({ type: 'finish', usage: { completionTokens: 4 } });
  });

  it('stops promptly when the signal aborts, and what was delivered counts as whole tokens', async () => {
    const controller = new AbortController();
    const delivered: string[] = [];
    let finished = false;
    await expect(
      (async () => {
        for await (const event of provider.stream(request({ signal: controller.signal }))) {
          if (event.type === 'finish') finished = true;
          else delivered.push(textOf(event));
          if (delivered.length === 2) controller.abort();
        }
      })(),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(finished).toBe(false);
    expect(delivered).toHaveLength(2);
    expect(countTokens(delivered.join(''))).toBe(6);
  });
});

describe('the simulator has an output limit, as a model does', () => {
  // A free test-key call asking for the most: 8 choices of 8,192 tokens, 20 alternatives each, and a
  // schema that asks for 100,000 strings of 100,000 characters.
  const greedy = request({
    n: 8,
    maxTokens: 8192,
    options: {
      logprobs: true,
      top_logprobs: 20,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'x', schema: { type: 'array', minItems: 100_000, items: { type: 'string', minLength: 100_000 } } },
      },
    },
  });

  test('2,048 completion tokens a call, shared by its choices, each cut with finish_reason "length"', async () => {
    const result = await provider.complete(greedy);
    expect(result.usage.completionTokens).toBeLessThanOrEqual(SIMULATED_COMPLETION_TOKENS);
    expect(result.choices.map((c) => c.finishReason)).toEqual(Array(8).fill('length'));
    for (const choice of result.choices) expect(countTokens(choice.message.content ?? '')).toBeLessThanOrEqual(SIMULATED_COMPLETION_TOKENS / 8);
    // The whole answer, logprobs and all, stays a few MB (unbounded, it would be 47 MB).
    expect(JSON.stringify(result).length).toBeLessThan(4 * 1024 * 1024);
  });

  test('a stream is cut at the same limit', async () => {
    const events = await collect(provider.stream(greedy));
    const finish = events.at(-1);
    expect(finish?.type).toBe('finish');
    expect(finish?.type === 'finish' ? finish.usage?.completionTokens : undefined).toBeLessThanOrEqual(SIMULATED_COMPLETION_TOKENS);
  });

  test('a call within the limit is not cut', async () => {
    const { finishReason } = await answer(request({ maxTokens: 2048 }));
    expect(finishReason).toBe('stop');
  });
});
