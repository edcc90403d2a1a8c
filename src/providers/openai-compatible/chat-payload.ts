/**
 * Maps our ChatRequest onto the OpenAI `/chat/completions` request body, and the upstream's
 * choices, finish reasons and usage back. Shared by the JSON and the streaming call. Every
 * option the client sent travels under its own name; nothing is dropped on the way.
 */
import type { ChatMessage, ChatRequest, ChatUsage, FinishReason, ToolCall } from '../ports';

export function chatPayload(request: ChatRequest, stream: boolean): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    ...request.options,
    model: request.upstreamModel,
    messages: compatibleMessages(request.messages),
    [request.maxTokensParam]: request.maxTokens,
  };
  if (request.n !== 1) payload.n = request.n;
  if (stream) {
    payload.stream = true;
    // Without this the upstream never reports usage on a stream; with it, usage arrives in one
    // last chunk whose `choices` is empty.
    // The client's include_obfuscation travels with it, as sent.
    payload.stream_options =
      request.includeObfuscation === undefined ? { include_usage: true } : { include_usage: true, include_obfuscation: request.includeObfuscation };
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

const FINISH_REASONS = new Set<FinishReason>(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);

/** OpenAI's finish reasons pass as they are; a server's own (eos, …) reads as a normal stop. */
export function finishReasonOf(value: unknown): FinishReason {
  return FINISH_REASONS.has(value as FinishReason) ? (value as FinishReason) : 'stop';
}

function numbersOf(value: unknown): Record<string, number> | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(value)) if (typeof v === 'number' && Number.isFinite(v) && k.length <= 64) out[k] = v;
  return Object.keys(out).length > 0 ? out : undefined;
}

export function usageOf(value: unknown): ChatUsage | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const u = value as Record<string, unknown>;
  if (typeof u.prompt_tokens !== 'number' || typeof u.completion_tokens !== 'number') return undefined;
  const usage: ChatUsage = { promptTokens: u.prompt_tokens, completionTokens: u.completion_tokens };
  const promptDetails = numbersOf(u.prompt_tokens_details);
  const completionDetails = numbersOf(u.completion_tokens_details);
  if (promptDetails) usage.promptDetails = promptDetails;
  if (completionDetails) usage.completionDetails = completionDetails;
  return usage;
}

/** The value when it is a string; what an untrusted upstream sent is read through this. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** Tool calls of an answer, keeping only the fields OpenAI defines. */
export function toolCallsOf(value: unknown): ToolCall[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  return value.map((raw: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }) => ({
    id: str(raw?.id) ?? '',
    type: 'function' as const,
    function: { name: str(raw?.function?.name) ?? '', arguments: str(raw?.function?.arguments) ?? '' },
  }));
}

/** `logprobs` as the upstream sent it when it is an object (OpenAI's `{ content, refusal }`), else null. */
export function logprobsOf(value: unknown): unknown {
  return value && typeof value === 'object' ? value : null;
}
