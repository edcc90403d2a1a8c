/**
 * Reads a validated chat request against the model that will serve it: content parts the model
 * can take, tools and structured outputs it supports, tool turns that fit together, and the
 * options forwarded as sent. Everything here is a 400 naming the field when it does not hold.
 */
import { invalidField, invalidRequest } from '../errors/domain-error';
import { FIELD, words } from '../errors/field-path';
import type { ChatModel } from '../catalog/model';
import type { ChatMessage, ChatOptions } from './chat-port';
import type { ChatRequestBody } from './chat-request';
import { readContentParts } from './content-parts';

export interface ChatCall {
  messages: ChatMessage[];
  options: ChatOptions;
  n: number;
  maxTokens: number;
  maxTokensParam: 'max_tokens' | 'max_completion_tokens';
  stream: boolean;
  includeUsage: boolean;
  /** `stream_options.include_obfuscation` as the client sent it, for the provider. */
  includeObfuscation?: boolean;
}

/** Request fields forwarded to the provider under their own names, when present. */
const FORWARDED = [
  'temperature',
  'top_p',
  'seed',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'logprobs',
  'top_logprobs',
  'frequency_penalty',
  'presence_penalty',
  'logit_bias',
  'user',
  'metadata',
  'reasoning_effort',
  'service_tier',
  'store',
  'prediction',
  'verbosity',
  'prompt_cache_key',
  'prompt_cache_retention',
  'safety_identifier',
  'modalities',
] as const satisfies readonly (keyof ChatOptions & keyof ChatRequestBody)[];

export function readChatCall(body: ChatRequestBody, model: ChatModel): ChatCall {
  const options: Record<string, unknown> = {};
  for (const field of FORWARDED) {
    const value = body[field];
    if (value !== undefined && value !== null) options[field] = value;
  }
  if (body.stop != null) {
    const stop = Array.isArray(body.stop) ? body.stop : [body.stop];
    if (stop.length > 0) options.stop = stop;
  }
  checkTools(body, model);
  checkStructuredOutput(body, model);
  // As OpenAI answers it: the options of a stream that was not asked for are a mistake worth saying.
  if (body.stream_options != null && body.stream !== true) {
    throw invalidField(['stream_options'], "only allowed when 'stream' is true.");
  }
  if (body.top_logprobs != null && body.top_logprobs > 0 && body.logprobs !== true) {
    throw invalidField(['top_logprobs'], "requires 'logprobs' to be true.");
  }
  const sentParam = body.max_completion_tokens != null ? 'max_completion_tokens' : 'max_tokens';
  const maxTokens = body.max_completion_tokens ?? body.max_tokens ?? model.defaultMaxTokens;
  if (maxTokens > model.maxOutputTokens) {
    throw invalidRequest(words`${FIELD} is too large: ${model.id} writes at most ${model.maxOutputTokens} tokens.`, [sentParam]);
  }
  const routeParam = model.route.maxTokensParam;
  return {
    messages: readMessages(body, model),
    options: options,
    n: body.n ?? 1,
    maxTokens,
    maxTokensParam: routeParam === 'as-sent' ? sentParam : routeParam,
    stream: body.stream === true,
    includeUsage: body.stream_options?.include_usage === true,
    ...(typeof body.stream_options?.include_obfuscation === 'boolean' ? { includeObfuscation: body.stream_options.include_obfuscation } : {}),
  };
}

function checkTools(body: ChatRequestBody, model: ChatModel): void {
  // Two tools of one name: the model's call could not say which it meant.
  const seen = new Set<string>();
  (body.tools ?? []).forEach((t, i) => {
    if (seen.has(t.function.name)) throw invalidField(['tools', i, 'function', 'name'], `'${t.function.name}' names another tool too.`);
    seen.add(t.function.name);
  });
  const usesTools = (body.tools?.length ?? 0) > 0 || body.messages.some((m) => m.role === 'tool' || (m.role === 'assistant' && m.tool_calls?.length));
  if (usesTools && !model.tools) throw invalidRequest(`The model '${model.id}' does not support tools.`, ['tools']);
  const choice = body.tool_choice;
  if (choice === undefined || choice === 'none' || choice === 'auto') return;
  const names = new Set((body.tools ?? []).map((t) => t.function.name));
  if (names.size === 0) throw invalidField(['tool_choice'], "'tools' must be given when a tool is required.");
  if (typeof choice === 'object' && !names.has(choice.function.name)) {
    throw invalidField(['tool_choice'], `no tool named '${choice.function.name}' in 'tools'.`);
  }
}

function checkStructuredOutput(body: ChatRequestBody, model: ChatModel): void {
  const type = body.response_format?.type;
  if ((type === 'json_object' || type === 'json_schema') && !model.structuredOutputs) {
    throw invalidRequest(words`The model '${model.id}' does not support ${FIELD} '${type}'.`, ['response_format']);
  }
}

/**
 * Messages with their parts checked, and tool turns that fit: every `tool` message answers a
 * call of the assistant turn before it, and every call is answered before the conversation goes on.
 */
function readMessages(body: ChatRequestBody, model: ChatModel): ChatMessage[] {
  let open = new Set<string>();
  const messages = body.messages.map((m, i): ChatMessage => {
    const content = Array.isArray(m.content) ? readContentParts(m.content, m.role, ['messages', i, 'content'], model.id, model.inputs) : (m.content ?? null);
    if (m.role === 'tool') {
      if (!open.has(m.tool_call_id)) {
        throw invalidField(['messages', i, 'tool_call_id'], 'it answers no tool call of the preceding assistant message.');
      }
      open.delete(m.tool_call_id);
      return { role: 'tool', content, tool_call_id: m.tool_call_id };
    }
    if (open.size > 0) {
      throw invalidField(['messages', i], "the tool calls of the assistant message before it must each be answered by a 'tool' message first.");
    }
    if (m.role === 'assistant') {
      open = new Set((m.tool_calls ?? []).map((c) => c.id));
      const out: ChatMessage = { role: 'assistant', content };
      if (m.name) out.name = m.name;
      if (m.tool_calls?.length)
        out.tool_calls = m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.function.name, arguments: c.function.arguments } }));
      if (m.refusal != null) out.refusal = m.refusal;
      return out;
    }
    return m.name ? { role: m.role, content, name: m.name } : { role: m.role, content };
  });
  if (open.size > 0) {
    const last = messages.length - 1;
    throw invalidField(['messages', last], "its tool calls must be answered by 'tool' messages before the model is asked again.");
  }
  return messages;
}
