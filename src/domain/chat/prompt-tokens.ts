/**
 * The prompt-size estimate behind a chat hold (and the simulator's honest usage): every part of
 * a request that a model reads costs tokens, so text, tool calls and results, tool definitions,
 * the response schema and media parts are all counted. Media is estimated from its size, on the
 * high side: a hold that is too large is released, one that is too small under-reserves.
 */
import type { ChatMessage, ChatOptions, ContentPart } from './chat-port';
import { countPromptTokens, countTokens } from './tokens';

/** OpenAI's largest high-detail image costs about 1,105 tokens; round up. */
export const IMAGE_PART_TOKENS = 1_500;
/** Audio: about 10 tokens a second; 1,000 bytes of compressed audio is well under a second. */
const AUDIO_BYTES_PER_TOKEN = 1_000;
/** Documents: text and page images; 20 bytes of a PDF per token is a generous estimate. */
const FILE_BYTES_PER_TOKEN = 20;

function base64Bytes(data: string | undefined): number {
  return data ? Math.ceil((data.length * 3) / 4) : 0;
}

function partTokens(part: ContentPart): number {
  switch (part.type) {
    case 'text':
      return countTokens(part.text);
    case 'refusal':
      return countTokens(part.refusal);
    case 'image_url':
      return IMAGE_PART_TOKENS;
    case 'input_audio':
      return Math.ceil(base64Bytes(part.input_audio.data) / AUDIO_BYTES_PER_TOKEN) + 1;
    case 'file':
      return Math.ceil(base64Bytes(part.file.file_data) / FILE_BYTES_PER_TOKEN) + IMAGE_PART_TOKENS;
  }
}

/** Tokens of a message beyond its framing: content, parts, tool calls and the id a result answers. */
function messageExtraTokens(message: ChatMessage): number {
  let total = 0;
  if (Array.isArray(message.content)) for (const part of message.content) total += partTokens(part);
  for (const call of message.tool_calls ?? []) total += countTokens(call.function.name) + countTokens(call.function.arguments) + 3;
  if (message.tool_call_id) total += countTokens(message.tool_call_id);
  if (message.refusal) total += countTokens(message.refusal);
  return total;
}

/** Estimated prompt tokens of a whole request. */
export function estimatePromptTokens(messages: readonly ChatMessage[], options: ChatOptions): number {
  let total = countPromptTokens(messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : '', name: m.name })));
  for (const message of messages) total += messageExtraTokens(message);
  if (options.tools?.length) total += countTokens(JSON.stringify(options.tools));
  if (options.response_format?.type === 'json_schema') total += countTokens(JSON.stringify(options.response_format.json_schema));
  return total;
}
