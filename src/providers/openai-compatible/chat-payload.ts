/**
 * Maps our ChatRequest onto the OpenAI `/chat/completions` request body, and the upstream's
 * finish reasons and usage back. Shared by the JSON and the streaming call.
 */
import type { ChatMessage, ChatRequest, ChatUsage, FinishReason } from '../ports';

export function chatPayload(request: ChatRequest, stream: boolean): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    model: request.upstreamModel,
    messages: compatibleMessages(request.messages),
    // `max_tokens` rather than `max_completion_tokens`: every compatible server (vLLM, llama.cpp,
    // TGI, LiteLLM…) understands it, and OpenAI still accepts it for chat models.
    max_tokens: request.maxTokens,
  };
  if (request.temperature !== undefined) payload.temperature = request.temperature;
  if (request.topP !== undefined) payload.top_p = request.topP;
  if (request.stop !== undefined && request.stop.length > 0) payload.stop = request.stop;
  if (request.seed !== undefined) payload.seed = request.seed;
  if (stream) {
    payload.stream = true;
    // Without this the upstream never reports usage on a stream; with it, usage arrives in one
    // last chunk whose `choices` is empty.
    payload.stream_options = { include_usage: true };
  }
  return payload;
}

/**
 * `developer` is an OpenAI-only role that many compatible servers reject; it means `system`
 * to them. The array is only copied when there is something to rewrite.
 */
function compatibleMessages(messages: ChatMessage[]): ChatMessage[] {
  if (!messages.some((m) => m.role === 'developer')) return messages;
  return messages.map((m) => (m.role === 'developer' ? { ...m, role: 'system' } : m));
}

/** Anything other than a length cut (content_filter, tool_calls, eos…) reads as a normal stop. */
export function finishReasonOf(value: unknown): FinishReason {
  return value === 'length' ? 'length' : 'stop';
}

export function usageOf(value: unknown): ChatUsage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const { prompt_tokens, completion_tokens } = value as { prompt_tokens?: unknown; completion_tokens?: unknown };
  if (typeof prompt_tokens !== 'number' || typeof completion_tokens !== 'number') return undefined;
  return { promptTokens: prompt_tokens, completionTokens: completion_tokens };
}
