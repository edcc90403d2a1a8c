import { z } from 'zod';
import { jsonSchemaObject } from '../json-schema-types';
import { absentWhenNull, metadataSchema } from '../chat-request';

/**
 * The OpenAI Responses API request, as far as a chat model can serve it. Strict: a field or an
 * item type this gateway cannot honour (built-in tools, background mode, conversations) is a
 * 400 naming it, never silently dropped.
 */

const text = z.string().max(1_000_000);
const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes');
const itemId = z.string().max(256);

const inputText = z.strictObject({ type: z.literal('input_text'), text });
const inputImage = z.strictObject({
  type: z.literal('input_image'),
  image_url: z.string().max(20_000_000).nullable().optional(),
  file_id: z.string().max(256).nullable().optional(),
  detail: z.enum(['auto', 'low', 'high']).optional(),
});
const inputFile = z.strictObject({
  type: z.literal('input_file'),
  file_data: z.string().max(20_000_000).optional(),
  file_id: z.string().max(256).nullable().optional(),
  file_url: z.string().max(2048).optional(),
  filename: z.string().max(256).optional(),
});
const inputAudio = z.strictObject({
  type: z.literal('input_audio'),
  input_audio: z.strictObject({ data: z.string().max(20_000_000), format: z.enum(['wav', 'mp3']) }),
});
const outputText = z.strictObject({
  type: z.literal('output_text'),
  text,
  annotations: z.array(z.unknown()).max(1000).optional(),
  logprobs: z.array(z.unknown()).optional(),
});
const refusal = z.strictObject({ type: z.literal('refusal'), refusal: text });

export const inputPart = z.discriminatedUnion('type', [inputText, inputImage, inputFile, inputAudio, outputText, refusal]);
export type ResponsesInputPart = z.output<typeof inputPart>;

const messageItem = z.strictObject({
  type: z.literal('message').optional(),
  id: itemId.optional(),
  status: z.string().max(32).optional(),
  role: z.enum(['user', 'system', 'developer', 'assistant']),
  content: z.union([text, z.array(inputPart).max(500)]),
  phase: z.string().max(32).nullable().optional(),
});

const functionCallItem = z.strictObject({
  type: z.literal('function_call'),
  id: itemId.optional(),
  call_id: z.string().min(1).max(256),
  name: toolName,
  arguments: z.string().max(1_000_000),
  status: z.string().max(32).optional(),
});

const functionCallOutputItem = z.strictObject({
  type: z.literal('function_call_output'),
  id: itemId.nullable().optional(),
  call_id: z.string().min(1).max(256),
  output: z.union([text, z.array(inputPart).max(500)]),
  status: z.string().max(32).nullable().optional(),
});

const itemReference = z.strictObject({ type: z.literal('item_reference'), id: itemId });

/**
 * A reasoning model's hidden state from an earlier turn, as agent SDKs send back every output
 * item with `store: false`. A chat completion has no place for it (and this gateway's answers
 * carry none), so it is taken and not forwarded, as a model that ignores it would.
 */
const reasoningItem = z.strictObject({
  type: z.literal('reasoning'),
  id: itemId.optional(),
  summary: z.array(z.unknown()).max(1000),
  content: z.array(z.unknown()).max(1000).nullable().optional(),
  encrypted_content: z.string().max(1_000_000).nullable().optional(),
  status: z.string().max(32).nullable().optional(),
});

export const inputItem = z.union([messageItem, functionCallItem, functionCallOutputItem, itemReference, reasoningItem]);
export type ResponsesInputItem = z.output<typeof inputItem>;

const functionToolDef = z.strictObject({
  type: z.literal('function'),
  name: toolName,
  description: z.string().max(100_000).nullable().optional(),
  parameters: jsonSchemaObject.nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

const textFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    name: toolName,
    schema: jsonSchemaObject,
    description: z.string().max(100_000).optional(),
    strict: z.boolean().nullable().optional(),
  }),
]);

const never = (message: string) => z.never({ message }).optional();

export const responsesRequestSchema = z.strictObject({
  model: z.string().min(1).max(100),
  input: z.union([text, z.array(inputItem).max(2000)]),
  instructions: text.nullable().optional(),
  tools: absentWhenNull(z.array(functionToolDef).max(128)),
  tool_choice: absentWhenNull(
    z.union([z.enum(['none', 'auto', 'required']), z.strictObject({ type: z.literal('function'), name: toolName })], {
      error: "must be 'none', 'auto', 'required' or { type: 'function', name }: allowed_tools and built-in tool choices are not supported",
    }),
  ),
  parallel_tool_calls: z.boolean().nullable().optional(),
  text: absentWhenNull(z.strictObject({ format: textFormat.optional(), verbosity: z.enum(['low', 'medium', 'high']).nullable().optional() })),
  max_output_tokens: z.number().int().positive().nullable().optional(),
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  top_logprobs: z.number().min(0).max(20).int().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.strictObject({ include_obfuscation: z.boolean().optional() }).nullable().optional(),
  store: z.boolean().nullable().optional(),
  previous_response_id: z.string().max(256).nullable().optional(),
  metadata: metadataSchema.nullable().optional(),
  user: absentWhenNull(z.string().max(256)),
  safety_identifier: absentWhenNull(z.string().max(256)),
  prompt_cache_key: absentWhenNull(z.string().max(1024)),
  prompt_cache_retention: z.enum(['in-memory', '24h']).nullable().optional(),
  service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority']).nullable().optional(),
  reasoning: z
    .strictObject({
      effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullable().optional(),
      // Asked for by agent SDKs' model settings. Chat completions return no summaries, so none
      // comes back (as from a model that wrote none), rather than the whole call failing.
      summary: z.enum(['auto', 'concise', 'detailed']).nullable().optional(),
    })
    .nullable()
    .optional(),
  truncation: z.literal('disabled', { message: "only 'disabled' truncation is supported" }).nullable().optional(),
  // reasoning.encrypted_content is what SDKs ask for with store: false on reasoning models: no
  // reasoning items come back (the calls run as chat completions), so there is nothing to include.
  include: z
    .array(
      z.enum(['message.output_text.logprobs', 'reasoning.encrypted_content'], {
        message: 'only message.output_text.logprobs and reasoning.encrypted_content can be included',
      }),
    )
    .max(2)
    .nullable()
    .optional(),
  background: z.literal(false, { message: 'background responses are not supported' }).nullable().optional(),
  conversation: never('conversations are not supported: use previous_response_id'),
  prompt: never('stored prompts are not supported'),
  max_tool_calls: never('max_tool_calls is not supported'),
});

export type ResponsesRequest = z.output<typeof responsesRequestSchema>;
