/**
 * A chat provider that answers what it is told: a whole answer, a failure (an upstream error),
 * or a stream of given events that then ends, fails, or waits for the call's abort as a real
 * upstream call does. It records every request it was sent.
 */
import type { ChatModel } from '../../../src/domain/catalog/model';
import type { ChatProviders } from '../../../src/domain/chat/chat-service';
import type { ChatProvider, ChatRequest, ChatResult, ChatStreamEvent, ChatUsage } from '../../../src/domain/chat/chat-port';

/** How a stream goes on after its events: it ends there, fails with the error, or waits for the abort and stops with its reason. */
export type StreamEnd = 'end' | { fail: unknown } | 'until-aborted';

type Script = { kind: 'answer'; result: ChatResult } | { kind: 'fail'; error: unknown } | { kind: 'stream'; events: ChatStreamEvent[]; end: StreamEnd };

export function textAnswer(text: string, usage: ChatUsage = { promptTokens: 0, completionTokens: 0 }): ChatResult {
  return { choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finishReason: 'stop', logprobs: null }], usage };
}

export const textChunk = (text: string): ChatStreamEvent => ({ type: 'chunk', choices: [{ index: 0, delta: { content: text }, finishReason: null }] });

export const stopChunk = (): ChatStreamEvent => ({ type: 'chunk', choices: [{ index: 0, delta: {}, finishReason: 'stop' }] });

export const finish = (usage?: ChatUsage): ChatStreamEvent => (usage ? { type: 'finish', usage } : { type: 'finish' });

export class FakeChatProvider implements ChatProvider {
  readonly requests: ChatRequest[] = [];
  private script: Script = { kind: 'answer', result: textAnswer('Hello.') };

  answers(result: ChatResult): this {
    this.script = { kind: 'answer', result };
    return this;
  }

  fails(error: unknown): this {
    this.script = { kind: 'fail', error };
    return this;
  }

  streams(events: ChatStreamEvent[], end: StreamEnd = 'end'): this {
    this.script = { kind: 'stream', events, end };
    return this;
  }

  async complete(request: ChatRequest): Promise<ChatResult> {
    this.requests.push(request);
    if (this.script.kind === 'fail') throw this.script.error;
    if (this.script.kind === 'answer') return this.script.result;
    throw new Error('this fake provider was told to stream');
  }

  async *stream(request: ChatRequest): AsyncGenerator<ChatStreamEvent> {
    this.requests.push(request);
    if (this.script.kind === 'fail') throw this.script.error;
    if (this.script.kind !== 'stream') throw new Error('this fake provider was told to answer whole');
    const { events, end } = this.script;
    for (const event of events) yield event;
    if (end === 'end') return;
    if (end !== 'until-aborted') throw end.fail;
    const signal = request.signal;
    if (!signal) throw new Error('a stream that waits for its abort needs a signal');
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    throw signal.reason;
  }
}

/** Live keys are served by `live`, test keys by `test` (the simulator, in the service). */
export class FakeChatProviders implements ChatProviders {
  constructor(
    readonly live = new FakeChatProvider(),
    readonly test = new FakeChatProvider(),
  ) {}

  chat(_model: ChatModel, mode: 'live' | 'test'): ChatProvider {
    return mode === 'live' ? this.live : this.test;
  }
}
