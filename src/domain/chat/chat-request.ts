import { z } from 'zod';
import { jsonSchemaObject } from './json-schema-types';

/**
 * The OpenAI chat-completions request, field by field. Every field is either forwarded to the
 * provider, used by the gateway, or refused: the object is strict, so an unknown or unsupported
 * field is a 400 naming it, never silently dropped. Types are strict too (a number is a JSON
 * number; nothing is coerced).
 */

const text = z.string().max(1_000_000);
const toolName = z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, underscores or dashes');

const toolCall = z.strictObject({
  id: z.string().min(1).max(256),
  type: z.literal('function'),
  function: z.strictObject({ name: toolName, arguments: z.string().max(1_000_000), parsed_arguments: z.unknown().optional() }),
});

/** Parts are checked one by one in content-parts.ts, so a bad one is named `messages[i].content[j]`. */
const parts = z
  .array(z.object({ type: z.string() }).passthrough())
  .min(1, 'an array of parts must not be empty')
  .max(500);

const message = z.discriminatedUnion('role', [
  z.strictObject({ role: z.enum(['system', 'developer']), content: z.union([text, parts]), name: z.string().max(64).optional() }),
  z.strictObject({ role: z.literal('user'), content: z.union([text, parts]), name: z.string().max(64).optional() }),
  z.strictObject({
    role: z.literal('assistant'),
    content: z.union([text, parts]).nullable().optional(),
    name: z.string().max(64).optional(),
    refusal: z.string().max(100_000).nullable().optional(),
    tool_calls: z.array(toolCall).max(128).optional(),
    // A returned message is sent back as it came: its output-only fields are accepted and not
    // forwarded (they describe the answer, they are not input).
    annotations: z.array(z.unknown()).max(1000).optional(),
    audio: z.null().optional(),
    function_call: z.null().optional(),
    // What the SDK's parse and stream helpers add to a returned message.
    parsed: z.unknown().optional(),
  }),
  z.strictObject({
    role: z.literal('tool'),
    content: z.union([text, parts]),
    tool_call_id: z.string().min(1).max(256),
    // LangChain's ToolMessage carries the tool's name (OpenAI takes it); the call id is what links it, so it is not forwarded.
    name: z.string().max(64).optional(),
  }),
]);

export const functionTool = z.strictObject({
  type: z.literal('function', { message: "only function tools are supported ('custom' tools are not)" }),
  function: z.strictObject({
    name: toolName,
    description: z.string().max(100_000).nullable().optional(),
    parameters: jsonSchemaObject.optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

export const toolChoice = z.union(
  [z.enum(['none', 'auto', 'required']), z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: toolName }) })],
  { error: "must be 'none', 'auto', 'required' or { type: 'function', function: { name } }: allowed_tools and custom tool choices are not supported" },
);

export const responseFormat = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({ type: z.literal('json_object') }),
  z.strictObject({
    type: z.literal('json_schema'),
    json_schema: z.strictObject({
      name: toolName,
      description: z.string().max(100_000).optional(),
      schema: jsonSchemaObject.optional(),
      strict: z.boolean().nullable().optional(),
    }),
  }),
]);

const unsupported = (what: string) => z.never({ message: what });

/**
 * An optional field whose `null` means "not given", as OpenAI reads it (openai-python sends
 * `None` as null): taken, and left out of what goes upstream. It was a 400 on these fields while
 * `temperature: null` and the like were taken.
 */
export const absentWhenNull = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);

/** OpenAI's metadata, on chat and Responses alike: at most 16 pairs, keys to 64 characters, values to 512. */
export const metadataSchema = z.record(z.string().max(64), z.string().max(512)).refine((m) => Object.keys(m).length <= 16, 'at most 16 key-value pairs');

export const chatRequestSchema = z
  .strictObject({
    model: z.string().min(1).max(100),
    messages: z.array(message).min(1).max(2000),
    max_tokens: z.number().int().positive().nullable().optional(),
    max_completion_tokens: z.number().int().positive().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.strictObject({ include_usage: z.boolean().optional(), include_obfuscation: z.boolean().optional() }).nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    // Range before int: 2^64 is then 'at most 8', not a remark about safe integers.
    n: z.number().min(1).max(8).int().nullable().optional(),
    stop: z
      .union([z.string().max(1000), z.array(z.string().max(1000)).max(4, 'at most 4 stop sequences')])
      .nullable()
      .optional(),
    seed: z.number().int().nullable().optional(),
    tools: absentWhenNull(z.array(functionTool).min(1, 'must not be empty: leave tools out instead').max(128)),
    tool_choice: absentWhenNull(toolChoice),
    parallel_tool_calls: absentWhenNull(z.boolean()),
    response_format: absentWhenNull(responseFormat),
    logprobs: z.boolean().nullable().optional(),
    top_logprobs: z.number().min(0).max(20).int().nullable().optional(),
    frequency_penalty: z.number().min(-2).max(2).nullable().optional(),
    presence_penalty: z.number().min(-2).max(2).nullable().optional(),
    logit_bias: z
      .record(z.string().regex(/^\d{1,7}$/, 'keys are token ids'), z.number().min(-100).max(100))
      .nullable()
      .optional(),
    user: absentWhenNull(z.string().max(256)),
    metadata: metadataSchema.nullable().optional(),
    reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullable().optional(),
    service_tier: z.enum(['auto', 'default', 'flex', 'scale', 'priority']).nullable().optional(),
    store: z.boolean().nullable().optional(),
    prediction: z
      .strictObject({ type: z.literal('content'), content: z.union([text, parts]) })
      .nullable()
      .optional(),
    verbosity: z.enum(['low', 'medium', 'high']).nullable().optional(),
    prompt_cache_key: absentWhenNull(z.string().max(1024)),
    prompt_cache_retention: z.enum(['in-memory', '24h']).nullable().optional(),
    safety_identifier: absentWhenNull(z.string().max(256)),
    // Each entry checked before the length, so ['text', 'audio'] says why rather than "too big".
    modalities: z
      .array(z.literal('text', { message: "only the 'text' output modality is supported" }))
      .max(4)
      .nullable()
      .optional(),
    audio: unsupported('audio output is not supported by this gateway').optional(),
    web_search_options: unsupported('web search is not supported by this gateway').optional(),
    functions: unsupported("'functions' is deprecated: send 'tools'").optional(),
    function_call: unsupported("'function_call' is deprecated: send 'tool_choice'").optional(),
  })
  .superRefine((body, ctx) => {
    // As OpenAI answers it: a tool choice means nothing without tools to choose from.
    if (body.tool_choice !== undefined && body.tools === undefined) {
      ctx.addIssue({ code: 'custom', path: ['tool_choice'], message: "is only allowed when 'tools' are given" });
    }
    if (body.max_tokens != null && body.max_completion_tokens != null) {
      ctx.addIssue({ code: 'custom', path: ['max_tokens'], message: "setting 'max_tokens' and 'max_completion_tokens' at the same time is not supported" });
    }
  });

export type ChatRequestBody = z.output<typeof chatRequestSchema>;
