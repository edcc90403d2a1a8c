/**
 * Streaming chat: POST /chat/completions with `stream: true`, read as server-sent events.
 *
 * Contract with the caller (see ChatProvider.stream):
 * - fails before the first byte (network, timeout, non-2xx) → the iterator throws before
 *   yielding anything, so nothing was sent to the client and nothing is billed;
 * - dies mid-stream (socket reset, idle timeout, an `error` event, EOF before `[DONE]` or a
 *   finish reason) → the deltas already yielded stay yielded, then the iterator throws
 *   upstream_error; the caller bills what it relayed;
 * - otherwise yields the deltas and exactly one `finish`, carrying the usage of the final chunk.
 * Stopping the iteration early (break / return) destroys the upstream response.
 * Some compatible servers ignore `stream: true` and answer one JSON completion; that is
 * relayed as a single delta, so the caller never has to know.
 */
import { DomainError, upstreamError } from '../../domain/errors/domain-error';
import type { ChatRequest, ChatStreamEvent, ChatUsage, FinishReason } from '../ports';
import { resultFromCompletion } from './chat-complete';
import { chatPayload, finishReasonOf, usageOf } from './chat-payload';
import { SseDataParser } from './sse-parser';
import { asUpstreamError } from './upstream-errors';
import { isUndiciTimeout, type UpstreamHttp } from './upstream-http';

/** How long the end of a response may trail its `[DONE]` before we stop waiting for it. */
const AFTER_DONE_GRACE_MS = 1000;

interface StreamChunk {
  choices?: Array<{ delta?: { content?: unknown }; finish_reason?: unknown }>;
  usage?: unknown;
  error?: unknown;
}

/** What the stream has told us so far about how it ends. */
interface StreamState {
  finishReason?: FinishReason;
  usage?: ChatUsage;
  done: boolean;
}

export async function* streamChat(http: UpstreamHttp, request: ChatRequest): AsyncGenerator<ChatStreamEvent> {
  const { body, contentType } = await http.openStream('/chat/completions', chatPayload(request, true), request.signal);
  if (contentType.startsWith('application/json')) {
    const result = resultFromCompletion(await http.readJson(body));
    if (result.content) yield { type: 'delta', text: result.content };
    yield { type: 'finish', finishReason: result.finishReason, usage: result.usage };
    return;
  }
  const parser = new SseDataParser();
  const decoder = new TextDecoder();
  const state: StreamState = { done: false };
  let graceTimer: NodeJS.Timeout | undefined;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      // After `[DONE]` we keep reading to the end of the response instead of leaving the loop:
      // leaving destroys the body, and with it the keep-alive connection, whenever the end of
      // the response arrives in a later network packet than `[DONE]` (common). A server that
      // keeps the response open after `[DONE]` gets a short grace period, then is cut off.
      if (state.done) continue;
      for (const data of parser.push(decoder.decode(chunk, { stream: true }))) {
        const text = applyEvent(data, state);
        if (text) yield { type: 'delta', text };
        if (state.done) {
          graceTimer = setTimeout(() => body.destroy(), AFTER_DONE_GRACE_MS);
          break;
        }
      }
    }
    if (!state.done) {
      for (const data of parser.end()) {
        const text = applyEvent(data, state);
        if (text) yield { type: 'delta', text };
      }
    }
  } catch (err) {
    // Anything after `[DONE]` (the grace cut-off, a reset) does not concern a complete answer.
    if (!state.done) throw asUpstreamError(err, isUndiciTimeout(err));
  } finally {
    clearTimeout(graceTimer);
    if (!body.destroyed) body.destroy();
  }
  // Some compatible servers never send `[DONE]`; a finish reason followed by a clean EOF is a
  // complete answer. Neither means the upstream went away mid-answer.
  if (!state.done && state.finishReason === undefined) {
    throw upstreamError('The model provider stopped answering mid-stream.');
  }
  yield { type: 'finish', finishReason: state.finishReason ?? 'stop', usage: state.usage };
}

/** Applies one SSE `data` payload to the state; returns the text delta it carried, if any. */
function applyEvent(data: string, state: StreamState): string | undefined {
  if (data === '[DONE]') {
    state.done = true;
    return undefined;
  }
  let chunk: StreamChunk;
  try {
    chunk = JSON.parse(data) as StreamChunk;
  } catch (err) {
    throw upstreamError(undefined, err);
  }
  if (chunk === null || typeof chunk !== 'object') throw upstreamError(undefined, new Error('Non-object stream chunk'));
  if (chunk.error !== undefined && chunk.error !== null) {
    throw new DomainError('upstream_error', 'The model provider failed mid-stream.', { cause: chunk.error });
  }
  const usage = usageOf(chunk.usage);
  if (usage) state.usage = usage;
  const choice = chunk.choices?.[0];
  if (!choice) return undefined;
  if (choice.finish_reason !== undefined && choice.finish_reason !== null) {
    state.finishReason = finishReasonOf(choice.finish_reason);
  }
  const content = choice.delta?.content;
  return typeof content === 'string' && content.length > 0 ? content : undefined;
}
