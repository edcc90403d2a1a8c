/**
 * The simulator's chat model. No network and no timers: a bench drives thousands of calls a
 * second through it, so the only cost is composing and tokenizing short strings.
 */
import type { ChatChoice, ChatProvider, ChatRequest, ChatResult, ChatStreamEvent, ChoiceDelta } from '../ports';
import { countTokens, splitIntoTokens } from '../../domain/chat/tokens';
import { estimatePromptTokens } from '../../domain/chat/prompt-tokens';
import { logprobsFor, planChoice, type PlannedChoice } from './chat-plan';

/** Token pieces per streamed delta: small enough that a normal reply arrives in many chunks. */
const PIECES_PER_DELTA = 3;

function plan(request: ChatRequest): PlannedChoice[] {
  return Array.from({ length: Math.max(1, request.n) }, (_, i) => planChoice(request, i));
}

/** Completion tokens of a planned choice: its text pieces, or the tool call's name and arguments. */
function tokensOf(choice: PlannedChoice): number {
  if (!choice.toolCall) return choice.pieces.length;
  return countTokens(choice.toolCall.function.name) + countTokens(choice.toolCall.function.arguments);
}

function usageOf(request: ChatRequest, choices: PlannedChoice[]) {
  return {
    promptTokens: estimatePromptTokens(request.messages, request.options),
    completionTokens: choices.reduce((sum, c) => sum + tokensOf(c), 0),
  };
}

function logprobsOf(request: ChatRequest, choice: PlannedChoice): unknown {
  if (request.options.logprobs !== true || choice.toolCall) return null;
  return logprobsFor(choice.pieces, request.options.top_logprobs ?? 0);
}

export class SimulatorChatProvider implements ChatProvider {
  async complete(request: ChatRequest): Promise<ChatResult> {
    request.signal?.throwIfAborted();
    const planned = plan(request);
    const choices = planned.map((c, index): ChatChoice => ({
      index,
      message: c.toolCall
        ? { role: 'assistant', content: null, refusal: null, tool_calls: [c.toolCall] }
        : { role: 'assistant', content: c.pieces.join(''), refusal: null },
      finishReason: c.finishReason,
      logprobs: logprobsOf(request, c),
    }));
    return { choices, usage: usageOf(request, planned) };
  }

  /**
   * Each choice in turn: text in deltas of a few pieces, or a tool call as OpenAI streams one
   * (id and name first, then argument fragments), then its finish reason; then usage. If
   * `signal` aborts, the stream throws at the next chunk boundary, as fetch-based providers do;
   * every delta is whole token pieces, so what was delivered counts exactly.
   */
  async *stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    const signal = request.signal;
    signal?.throwIfAborted();
    const planned = plan(request);
    for (const [index, choice] of planned.entries()) {
      for (const delta of deltasOf(request, choice, index)) {
        yield { type: 'chunk', choices: [delta] };
        signal?.throwIfAborted();
      }
      yield { type: 'chunk', choices: [{ index, delta: {}, finishReason: choice.finishReason }] };
    }
    yield { type: 'finish', usage: usageOf(request, planned) };
  }
}

function* deltasOf(request: ChatRequest, choice: PlannedChoice, index: number): Generator<ChoiceDelta> {
  if (choice.toolCall) {
    const { id, function: fn } = choice.toolCall;
    yield { index, delta: { tool_calls: [{ index: 0, id, type: 'function', function: { name: fn.name, arguments: '' } }] }, finishReason: null };
    const pieces = splitIntoTokens(fn.arguments);
    for (let i = 0; i < pieces.length; i += PIECES_PER_DELTA) {
      yield { index, delta: { tool_calls: [{ index: 0, function: { arguments: pieces.slice(i, i + PIECES_PER_DELTA).join('') } }] }, finishReason: null };
    }
    return;
  }
  const wantLogprobs = request.options.logprobs === true;
  for (let i = 0; i < choice.pieces.length; i += PIECES_PER_DELTA) {
    const pieces = choice.pieces.slice(i, i + PIECES_PER_DELTA);
    const delta: ChoiceDelta = { index, delta: { content: pieces.join('') }, finishReason: null };
    if (wantLogprobs) delta.logprobs = logprobsFor(pieces, request.options.top_logprobs ?? 0);
    yield delta;
  }
}
