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
import type { ChatRequest, ChatResult, ChatStreamEvent, ChatUsage, ChoiceDelta, StreamStamp, ToolCallDelta } from '../ports';
import { resultFromCompletion } from './chat-complete';
import { chatPayload, finishReasonOf, logprobsOf, str, usageOf } from './chat-payload';
import { SseDataParser } from './sse-parser';
import { asUpstreamError } from '../shared/upstream-errors';
import { isUndiciTimeout, type UpstreamHttp } from './upstream-http';

/** How long the end of a response may trail its `[DONE]` before we stop waiting for it. */
const AFTER_DONE_GRACE_MS = 1000;

interface StreamChoice {
  index?: unknown;
  delta?: { role?: unknown; content?: unknown; refusal?: unknown; tool_calls?: unknown };
  finish_reason?: unknown;
  logprobs?: unknown;
}

interface StreamChunk {
  choices?: StreamChoice[];
  system_fingerprint?: unknown;
  service_tier?: unknown;
  usage?: unknown;
  error?: unknown;
}

/** What the stream has told us so far about how it ends. */
interface StreamState {
  finished: boolean;
  usage?: ChatUsage;
  done: boolean;
  /** The system fingerprint and service tier, once a chunk has named them. */
  stamp?: StreamStamp;
}

export async function* streamChat(http: UpstreamHttp, request: ChatRequest): AsyncGenerator<ChatStreamEvent> {
  const { body, contentType } = await http.openStream('/chat/completions', chatPayload(request, true), request.signal, request);
  if (contentType.startsWith('application/json')) {
    const result = resultFromCompletion(await http.readJson(body));
    const stamp = stampOf({ system_fingerprint: result.systemFingerprint, service_tier: result.serviceTier });
    yield chunkEvent(deltasOfResult(result), stamp);
    yield { type: 'finish', usage: result.usage };
    return;
  }
  const parser = new SseDataParser();
  const decoder = new TextDecoder();
  const state: StreamState = { done: false, finished: false };
  let graceTimer: NodeJS.Timeout | undefined;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      // After `[DONE]` we keep reading to the end of the response instead of leaving the loop:
      // leaving destroys the body, and with it the keep-alive connection, whenever the end of
      // the response arrives in a later network packet than `[DONE]` (common). A server that
      // keeps the response open after `[DONE]` gets a short grace period, then is cut off.
      if (state.done) continue;
      for (const data of parser.push(decoder.decode(chunk, { stream: true }))) {
        const choices = applyEvent(data, state);
        if (choices) yield chunkEvent(choices, state.stamp);
        if (state.done) {
          graceTimer = setTimeout(() => body.destroy(), AFTER_DONE_GRACE_MS);
          break;
        }
      }
    }
    if (!state.done) {
      for (const data of parser.end()) {
        const choices = applyEvent(data, state);
        if (choices) yield chunkEvent(choices, state.stamp);
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
  if (!state.done && !state.finished) {
    throw upstreamError('The model provider stopped answering mid-stream.');
  }
  yield { type: 'finish', usage: state.usage };
}

/** A whole answer as the one chunk a stream of it would add up to. */
function deltasOfResult(result: ChatResult): ChoiceDelta[] {
  return result.choices.map((c) => {
    const delta: ChoiceDelta['delta'] = { role: 'assistant' };
    if (c.message.content) delta.content = c.message.content;
    if (c.message.refusal) delta.refusal = c.message.refusal;
    if (c.message.tool_calls) delta.tool_calls = c.message.tool_calls.map((t, index) => ({ index, ...t }));
    return { index: c.index, delta, finishReason: c.finishReason, logprobs: c.logprobs };
  });
}

function toolCallDeltasOf(value: unknown): ToolCallDelta[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.map((raw: { index?: unknown; id?: unknown; function?: { name?: unknown; arguments?: unknown } }, i) => {
    const out: ToolCallDelta = { index: typeof raw?.index === 'number' ? raw.index : i };
    const id = str(raw?.id);
    if (id) {
      out.id = id;
      out.type = 'function';
    }
    const name = str(raw?.function?.name);
    const args = str(raw?.function?.arguments);
    if (name !== undefined || args !== undefined) {
      out.function = {};
      if (name !== undefined) out.function.name = name;
      if (args !== undefined) out.function.arguments = args;
    }
    return out;
  });
}

/** One upstream choice delta, with only the fields OpenAI defines; undefined when it carries nothing. */
function choiceDeltaOf(c: StreamChoice, position: number): ChoiceDelta | undefined {
  if (!c || typeof c !== 'object') return undefined;
  const delta: ChoiceDelta['delta'] = {};
  if (c.delta?.role === 'assistant') delta.role = 'assistant';
  const content = str(c.delta?.content);
  if (content) delta.content = content;
  const refusal = str(c.delta?.refusal);
  if (refusal) delta.refusal = refusal;
  const toolCalls = toolCallDeltasOf(c.delta?.tool_calls);
  if (toolCalls) delta.tool_calls = toolCalls;
  const finishReason = c.finish_reason == null ? null : finishReasonOf(c.finish_reason);
  const logprobs = logprobsOf(c.logprobs);
  if (!content && !refusal && !toolCalls && finishReason === null && logprobs === null) return undefined;
  const out: ChoiceDelta = { index: typeof c.index === 'number' ? c.index : position, delta, finishReason };
  if (logprobs !== null) out.logprobs = logprobs;
  return out;
}

/** Applies one SSE `data` payload to the state; returns the choice deltas it carried, if any. */
function applyEvent(data: string, state: StreamState): ChoiceDelta[] | undefined {
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
  // OpenAI repeats these on every chunk; the first that names them is enough.
  state.stamp ??= stampOf(chunk);
  if (!Array.isArray(chunk.choices)) return undefined;
  const choices: ChoiceDelta[] = [];
  chunk.choices.forEach((c, i) => {
    const delta = choiceDeltaOf(c, i);
    if (!delta) return;
    if (delta.finishReason !== null) state.finished = true;
    choices.push(delta);
  });
  return choices.length > 0 ? choices : undefined;
}

/** A chunk event, stamped when the upstream has named its fingerprint or tier. */
function chunkEvent(choices: ChoiceDelta[], stamp: StreamStamp | undefined): ChatStreamEvent {
  return stamp ? { type: 'chunk', choices, stamp } : { type: 'chunk', choices };
}

/** The system fingerprint and service tier a chunk names, when it names either. */
function stampOf(chunk: { system_fingerprint?: unknown; service_tier?: unknown }): StreamStamp | undefined {
  const systemFingerprint = str(chunk.system_fingerprint);
  const serviceTier = str(chunk.service_tier);
  if (systemFingerprint === undefined && serviceTier === undefined) return undefined;
  return { ...(systemFingerprint !== undefined ? { systemFingerprint } : {}), ...(serviceTier !== undefined ? { serviceTier } : {}) };
}
