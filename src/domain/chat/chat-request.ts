import { z } from 'zod';
import type { ChatMessage } from '../../providers/ports';

const textPart = z.object({ type: z.literal('text'), text: z.string() }).passthrough();
const anyPart = z.object({ type: z.string() }).passthrough();

const message = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: z.union([z.string().max(1_000_000), z.array(z.union([textPart, anyPart])).max(100)]).nullable().optional(),
    name: z.string().max(64).optional(),
  })
  .passthrough();

/**
 * The OpenAI chat request, as the SDK sends it. Fields this gateway does not use (logprobs,
 * tools, response_format, ...) are accepted and ignored, as OpenAI-compatible servers do.
 */
export const chatRequestSchema = z
  .object({
    model: z.string().min(1).max(100),
    messages: z.array(message).min(1).max(1000),
    max_tokens: z.number().int().positive().nullable().optional(),
    max_completion_tokens: z.number().int().positive().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).passthrough().nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    n: z.literal(1, { message: 'only n=1 is supported' }).nullable().optional(),
    stop: z.union([z.string(), z.array(z.string()).max(4)]).nullable().optional(),
    seed: z.number().int().nullable().optional(),
    user: z.string().max(256).optional(),
  })
  .passthrough();

export type ChatRequestBody = z.output<typeof chatRequestSchema>;

/** Array-of-parts content becomes text; a non-text part cannot be served by a text chat model. */
export function toProviderMessages(body: ChatRequestBody): ChatMessage[] {
  return body.messages.map((m) => {
    let content = '';
    if (typeof m.content === 'string') content = m.content;
    else if (Array.isArray(m.content)) content = m.content.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
    return m.name ? { role: m.role, content, name: m.name } : { role: m.role, content };
  });
}
