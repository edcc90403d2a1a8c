/**
 * A Responses API request as the chat-completions request that serves it: instructions become
 * the system message, items become messages (function calls join the assistant turn they belong
 * to, their outputs become tool messages), and options take their chat names. The chat service
 * then validates, permits, limits and bills it exactly like a chat call.
 */
import { invalidField } from '../../errors/domain-error';
import type { FieldPath } from '../../errors/field-path';
import type { ResponsesInputItem, ResponsesInputPart, ResponsesRequest } from './responses-request';

type ChatPart = Record<string, unknown>;
type ChatMessageBody = { role: string; content: string | ChatPart[] | null; tool_calls?: unknown[]; tool_call_id?: string };

export interface ChatTranslation {
  body: Record<string, unknown>;
  /** For each chat message, where it came from in the Responses request (for the paths of errors). */
  origins: FieldPath[];
}

function partToChat(part: ResponsesInputPart, path: FieldPath): ChatPart {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'refusal', refusal: part.refusal };
    case 'input_image':
      if (!part.image_url) throw invalidField(path, 'file_id images are not supported; send image_url.');
      return { type: 'image_url', image_url: part.detail ? { url: part.image_url, detail: part.detail } : { url: part.image_url } };
    case 'input_file':
      if (part.file_data === undefined) throw invalidField(path, 'send the file as file_data.');
      return { type: 'file', file: part.filename ? { file_data: part.file_data, filename: part.filename } : { file_data: part.file_data } };
    case 'input_audio':
      return { type: 'input_audio', input_audio: part.input_audio };
  }
}

function contentToChat(content: string | ResponsesInputPart[], path: FieldPath): string | ChatPart[] {
  return typeof content === 'string' ? content : content.map((p, j) => partToChat(p, [...path, j]));
}

/**
 * A function call's output as a chat `tool` message's content: its text parts as they are. A
 * chat tool message carries text only, so an image or a file in it is a 400 naming the part:
 * dropped without a word, the call would be answered and charged as if the model had seen them
 * (and the text parts would run together).
 */
function toolOutputToChat(output: string | ResponsesInputPart[], path: FieldPath): string | ChatPart[] {
  if (typeof output === 'string') return output;
  return output.map((part, j) => {
    if (part.type === 'input_text' || part.type === 'output_text') return { type: 'text', text: part.text };
    throw invalidField(
      [...path, j],
      `a function call's output may carry text only here (it reaches the model as a chat tool message); send the ${part.type} in a user message.`,
    );
  });
}

/** Appends items to `messages`, in order; `item_reference`s must already be resolved. */
function itemsToMessages(items: readonly ResponsesInputItem[], messages: ChatMessageBody[], origins: FieldPath[], pathOf: (i: number) => FieldPath): void {
  items.forEach((item, i) => {
    const path = pathOf(i);
    if (item.type === 'item_reference') throw invalidField(path, 'unknown item.');
    // Taken, not forwarded (responses-request.ts).
    if (item.type === 'reasoning') return;
    if (item.type === 'function_call') {
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = messages[messages.length - 1];
      // Calls made in one turn belong to one assistant message, with any text said before them.
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
      else {
        messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        origins.push(path);
      }
      return;
    }
    if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: toolOutputToChat(item.output, [...path, 'output']) });
      origins.push(path);
      return;
    }
    messages.push({ role: item.role, content: contentToChat(item.content, [...path, 'content']) });
    origins.push(path);
  });
}

export function responsesToChat(request: ResponsesRequest, history: readonly ResponsesInputItem[], input: readonly ResponsesInputItem[]): ChatTranslation {
  const messages: ChatMessageBody[] = [];
  const origins: FieldPath[] = [];
  if (request.instructions) {
    messages.push({ role: 'system', content: request.instructions });
    origins.push(['instructions']);
  }
  itemsToMessages(history, messages, origins, () => ['previous_response_id']);
  itemsToMessages(input, messages, origins, (i) => (typeof request.input === 'string' ? ['input'] : ['input', i]));

  const body: Record<string, unknown> = { model: request.model, messages };
  if (request.tools?.length) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        ...(t.parameters ? { parameters: t.parameters } : {}),
        ...(t.strict != null ? { strict: t.strict } : {}),
      },
    }));
  }
  const choice = request.tool_choice;
  // Chat refuses a tool choice without tools; the Responses API takes `tools: []` with one (agent SDKs send it).
  if (choice !== undefined && body.tools) body.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
  const format = request.text?.format;
  if (format?.type === 'json_schema') {
    body.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.description ? { description: format.description } : {}),
        ...(format.strict != null ? { strict: format.strict } : {}),
      },
    };
  } else if (format) body.response_format = { type: format.type };
  if (request.max_output_tokens != null) body.max_completion_tokens = request.max_output_tokens;
  if (request.temperature != null) body.temperature = request.temperature;
  if (request.top_p != null) body.top_p = request.top_p;
  if (request.parallel_tool_calls != null) body.parallel_tool_calls = request.parallel_tool_calls;
  if (request.include?.includes('message.output_text.logprobs')) {
    body.logprobs = true;
    if (request.top_logprobs != null) body.top_logprobs = request.top_logprobs;
  }
  if (request.text?.verbosity) body.verbosity = request.text.verbosity;
  if (request.reasoning?.effort) body.reasoning_effort = request.reasoning.effort;
  for (const field of ['user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'service_tier'] as const) {
    if (request[field] != null) body[field] = request[field];
  }
  if (request.stream) {
    body.stream = true;
    // The client's include_obfuscation travels with it, as a chat stream's does.
    const obfuscation = request.stream_options?.include_obfuscation;
    body.stream_options = typeof obfuscation === 'boolean' ? { include_usage: true, include_obfuscation: obfuscation } : { include_usage: true };
  }
  return { body, origins };
}

/** Chat parameter names as the Responses request calls them, for errors. */
const PARAM_NAMES: Record<string, FieldPath> = {
  // The conversation as a whole (too few or too many items): `input`, with any previous turns.
  messages: ['input'],
  max_completion_tokens: ['max_output_tokens'],
  // The default cap, sent upstream under a route's `max_tokens` when the request named none.
  max_tokens: ['max_output_tokens'],
  response_format: ['text', 'format'],
  verbosity: ['text', 'verbosity'],
  reasoning_effort: ['reasoning', 'effort'],
  logprobs: ['include'],
};

/** Maps the path of a chat-side field (`messages[2].content[0]`) back to where the client wrote it. */
export function responsesPath(path: FieldPath, origins: readonly FieldPath[]): FieldPath {
  const [head, index, ...rest] = path;
  if (head === 'messages' && typeof index === 'number') {
    const origin = origins[index] ?? ['input'];
    // A tool message answers its call by `call_id`.
    const tail = rest[0] === 'tool_call_id' ? ['call_id', ...rest.slice(1)] : rest;
    // A Responses input_image carries its URL as `image_url` itself, not under `.url`.
    const imageUrl = tail.length >= 2 && tail.at(-2) === 'image_url' && tail.at(-1) === 'url';
    return [...origin, ...(imageUrl ? tail.slice(0, -1) : tail)];
  }
  // A Responses function tool is flat: `tools[0].parameters`, not `tools[0].function.parameters`.
  if (head === 'tools' && typeof index === 'number' && rest[0] === 'function') return ['tools', index, ...rest.slice(1)];
  return typeof head === 'string' && Object.hasOwn(PARAM_NAMES, head) ? [...PARAM_NAMES[head], ...path.slice(1)] : path;
}
