/**
 * The simulator's chat model. No network and no timers: a bench drives thousands of calls a
 * second through it, so the only cost is composing and tokenizing a short string.
 */
import type { ChatProvider, ChatRequest, ChatResult, ChatStreamEvent, FinishReason } from '../ports';
import { countPromptTokens, countTokens, splitIntoTokens } from '../../domain/chat/tokens';
import { composeReply } from './chat-reply';

/** Token pieces per streamed delta: small enough that a normal reply arrives in many chunks. */
const PIECES_PER_DELTA = 3;

interface PlannedReply {
  pieces: string[];
  finishReason: FinishReason;
}

/**
 * Applies `stop` (cut before the earliest stop string, as OpenAI does) and then `maxTokens`
 * (keep the first maxTokens pieces). Pieces of a prefix re-tokenize to themselves (see
 * tokens.ts), so the usage of a cut reply is exactly the number of pieces kept.
 */
function planReply(request: ChatRequest): PlannedReply {
  let content = composeReply(request.upstreamModel, request.messages, request.seed);
  if (request.stop) {
    let cut = content.length;
    for (const stop of request.stop) {
      if (stop === '') continue;
      const at = content.indexOf(stop);
      if (at >= 0 && at < cut) cut = at;
    }
    content = content.slice(0, cut);
  }
  const pieces = splitIntoTokens(content);
  const limit = Math.max(0, Math.floor(request.maxTokens));
  if (pieces.length > limit) return { pieces: pieces.slice(0, limit), finishReason: 'length' };
  return { pieces, finishReason: 'stop' };
}

export class SimulatorChatProvider implements ChatProvider {
  async complete(request: ChatRequest): Promise<ChatResult> {
    request.signal?.throwIfAborted();
    const { pieces, finishReason } = planReply(request);
    const content = pieces.join('');
    return {
      content,
      finishReason,
      usage: { promptTokens: countPromptTokens(request.messages), completionTokens: countTokens(content) },
    };
  }

  /**
   * Deltas of a few pieces each, then one finish event with usage. If `signal` aborts, the
   * stream throws the abort reason at the next chunk boundary, as fetch-based providers do;
   * every delta already yielded is whole token pieces, so countTokens of the text delivered
   * so far is exactly what was produced.
   */
  async *stream(request: ChatRequest): AsyncIterable<ChatStreamEvent> {
    const signal = request.signal;
    signal?.throwIfAborted();
    const { pieces, finishReason } = planReply(request);
    for (let i = 0; i < pieces.length; i += PIECES_PER_DELTA) {
      yield { type: 'delta', text: pieces.slice(i, i + PIECES_PER_DELTA).join('') };
      signal?.throwIfAborted();
    }
    yield {
      type: 'finish',
      finishReason,
      usage: { promptTokens: countPromptTokens(request.messages), completionTokens: pieces.length },
    };
  }
}
