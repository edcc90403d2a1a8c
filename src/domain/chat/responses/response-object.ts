/**
 * The Responses API `response` object and its output items, built from a chat answer. Ids are
 * ours (`resp_`, `msg_`, `fc_`); a function call keeps the chat tool-call id as its `call_id`,
 * which is what the client sends back with the call's output.
 */
import { randomBytes } from 'node:crypto';
import type { ChatChoice, ChatUsage, FinishReason } from '../chat-port';
import type { ResponsesRequest } from './responses-request';

export type OutputItem = Record<string, unknown> & { id: string; type: 'message' | 'function_call' };

export const newItemId = (prefix: 'resp' | 'msg' | 'fc' | 'rs') => `${prefix}_${randomBytes(16).toString('hex')}`;

export function messageItem(id: string, parts: Record<string, unknown>[], status: 'in_progress' | 'completed' | 'incomplete'): OutputItem {
  return { id, type: 'message', status, role: 'assistant', content: parts };
}

export function functionCallItem(id: string, callId: string, name: string, args: string, status: 'in_progress' | 'completed' | 'incomplete'): OutputItem {
  return { id, type: 'function_call', status, call_id: callId, name, arguments: args };
}

export function outputTextPart(text: string, logprobs: unknown[] = []) {
  return { type: 'output_text', text, annotations: [], logprobs };
}

/** Logprobs of chat's `logprobs.content`, in the Responses shape. */
export function responsesLogprobs(chatLogprobs: unknown): unknown[] {
  const content = (chatLogprobs as { content?: unknown } | null)?.content;
  return Array.isArray(content) ? content : [];
}

/** The output items of a whole chat answer (the first choice: Responses has one). */
export function outputItemsOf(choice: ChatChoice): OutputItem[] {
  const items: OutputItem[] = [];
  const { content, refusal, tool_calls: calls } = choice.message;
  const status = choice.finishReason === 'length' ? 'incomplete' : 'completed';
  if (refusal) items.push(messageItem(newItemId('msg'), [{ type: 'refusal', refusal }], status));
  else if (content) items.push(messageItem(newItemId('msg'), [outputTextPart(content, responsesLogprobs(choice.logprobs))], status));
  for (const call of calls ?? []) items.push(functionCallItem(newItemId('fc'), call.id, call.function.name, call.function.arguments, 'completed'));
  return items;
}

export function responsesUsage(usage: ChatUsage) {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.promptDetails?.cached_tokens ?? 0 },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: usage.completionDetails?.reasoning_tokens ?? 0 },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

export interface ResponseFrame {
  id: string;
  createdAt: number;
  model: string;
  request: ResponsesRequest;
  store: boolean;
}

/** How a chat finish reads in Responses terms. */
export function completionStatus(finishReason: FinishReason | null) {
  if (finishReason === 'length') return { status: 'incomplete' as const, incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete' as const, incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed' as const, incomplete_details: null };
}

/** The `response` object; `output` and `usage` are absent while it is in progress. */
export function responseObject(
  frame: ResponseFrame,
  state: {
    status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
    incomplete_details?: unknown;
    output: OutputItem[];
    usage?: ChatUsage;
    /** What a failed response says (OpenAI's ResponseError). */
    error?: { code: string; message: string };
  },
) {
  const r = frame.request;
  return {
    id: frame.id,
    object: 'response',
    created_at: frame.createdAt,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incomplete_details ?? null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    model: frame.model,
    output: state.output,
    parallel_tool_calls: r.parallel_tool_calls ?? true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: { effort: r.reasoning?.effort ?? null, summary: null },
    service_tier: r.service_tier ?? 'default',
    store: frame.store,
    temperature: r.temperature ?? 1,
    text: { format: r.text?.format ?? { type: 'text' }, verbosity: r.text?.verbosity ?? 'medium' },
    tool_choice: r.tool_choice ?? 'auto',
    tools: (r.tools ?? []).map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description ?? null,
      parameters: t.parameters ?? null,
      strict: t.strict ?? true,
    })),
    top_logprobs: r.top_logprobs ?? 0,
    top_p: r.top_p ?? 1,
    truncation: 'disabled',
    usage: state.usage ? responsesUsage(state.usage) : null,
    user: r.user ?? null,
    metadata: r.metadata ?? {},
  };
}
