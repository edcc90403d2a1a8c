/**
 * A Responses API request as the chat-completions request that serves it: instructions become
 * the system message, items become messages (function calls join the assistant turn they belong
 * to, their outputs become tool messages), and options take their chat names. The chat service
 * then validates, permits, limits and bills it exactly like a chat call.
 */
import { invalidRequest } from '../../errors/domain-error';
import type { ResponsesInputItem, ResponsesInputPart, ResponsesRequest } from './responses-request';

type ChatPart = Record<string, unknown>;
type ChatMessageBody = { role: string; content: string | ChatPart[] | null; tool_calls?: unknown[]; tool_call_id?: string };

export interface ChatTranslation {
  body: Record<string, unknown>;
  /** For each chat message, where it came from in the Responses request (for error params). */
  origins: string[];
}

function partToChat(part: ResponsesInputPart, param: string): ChatPart {
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'refusal', refusal: part.refusal };
    case 'input_image':
      if (!part.image_url) throw invalidRequest(`Invalid '${param}': file_id images are not supported; send image_url.`, param);
      return { type: 'image_url', image_url: part.detail ? { url: part.image_url, detail: part.detail } : { url: part.image_url } };
    case 'input_file':
      if (part.file_data === undefined) throw invalidRequest(`Invalid '${param}': send the file as file_data.`, param);
      return { type: 'file', file: part.filename ? { file_data: part.file_data, filename: part.filename } : { file_data: part.file_data } };
    case 'input_audio':
      return { type: 'input_audio', input_audio: part.input_audio };
  }
}

function contentToChat(content: string | ResponsesInputPart[], param: string): string | ChatPart[] {
  return typeof content === 'string' ? content : content.map((p, j) => partToChat(p, `${param}[${j}]`));
}

/**
 * A function call's output as a chat `tool` message's content: its text parts as they are. A
 * chat tool message carries text only, so an image or a file in it is a 400 naming the part:
 * dropped without a word, the call would be answered and charged as if the model had seen them
 * (and the text parts would run together).
 */
function toolOutputToChat(output: string | ResponsesInputPart[], param: string): string | ChatPart[] {
  if (typeof output === 'string') return output;
  return output.map((part, j) => {
    if (part.type === 'input_text' || part.type === 'output_text') return { type: 'text', text: part.text };
    const at = `${param}[${j}]`;
    throw invalidRequest(
      `Invalid '${at}': a function call's output may carry text only here (it reaches the model as a chat tool message); send the ${part.type} in a user message.`,
      at,
    );
  });
}

/** Appends items to `messages`, in order; `item_reference`s must already be resolved. */
function itemsToMessages(items: readonly ResponsesInputItem[], messages: ChatMessageBody[], origins: string[], paramOf: (i: number) => string): void {
  items.forEach((item, i) => {
    const param = paramOf(i);
    if (item.type === 'item_reference') throw invalidRequest(`Invalid '${param}': unknown item.`, param);
    // Taken, not forwarded (responses-request.ts).
    if (item.type === 'reasoning') return;
    if (item.type === 'function_call') {
      const call = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
      const last = messages[messages.length - 1];
      // Calls made in one turn belong to one assistant message, with any text said before them.
      if (last?.role === 'assistant') (last.tool_calls ??= []).push(call);
      else {
        messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        origins.push(param);
      }
      return;
    }
    if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: toolOutputToChat(item.output, `${param}.output`) });
      origins.push(param);
      return;
    }
    messages.push({ role: item.role, content: contentToChat(item.content, `${param}.content`) });
    origins.push(param);
  });
}

export function responsesToChat(request: ResponsesRequest, history: readonly ResponsesInputItem[], input: readonly ResponsesInputItem[]): ChatTranslation {
  const messages: ChatMessageBody[] = [];
  const origins: string[] = [];
  if (request.instructions) {
    messages.push({ role: 'system', content: request.instructions });
    origins.push('instructions');
  }
  itemsToMessages(history, messages, origins, () => 'previous_response_id');
  itemsToMessages(input, messages, origins, (i) => (typeof request.input === 'string' ? 'input' : `input[${i}]`));

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
const PARAM_NAMES: Record<string, string> = {
  // The conversation as a whole (too few or too many items): `input`, with any previous turns.
  messages: 'input',
  max_completion_tokens: 'max_output_tokens',
  // The default cap, sent upstream under a route's `max_tokens` when the request named none.
  max_tokens: 'max_output_tokens',
  response_format: 'text.format',
  verbosity: 'text.verbosity',
  reasoning_effort: 'reasoning.effort',
  logprobs: 'include',
};

/** Maps a chat-side `param` (`messages[2].content[0]`) back to where the client wrote it. */
export function responsesParam(param: string, origins: readonly string[]): string {
  const message = /^messages\[(\d+)\](.*)$/.exec(param);
  if (message) {
    const origin = origins[Number(message[1])] ?? 'input';
    // A Responses input_image carries its URL as `image_url` itself, not under `.url`.
    return origin + message[2].replace(/^\.tool_call_id/, '.call_id').replace(/\.image_url\.url$/, '.image_url');
  }
  // A Responses function tool is flat: `tools[0].parameters`, not `tools[0].function.parameters`.
  const tool = /^tools\[(\d+)\]\.function(.*)$/.exec(param);
  if (tool) return `tools[${tool[1]}]${tool[2]}`;
  const head = /^[a-z_]+/.exec(param)?.[0] ?? param;
  return PARAM_NAMES[head] ? PARAM_NAMES[head] + param.slice(head.length) : param;
}
