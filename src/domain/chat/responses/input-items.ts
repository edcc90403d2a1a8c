/**
 * GET /v1/responses/{id}/input_items: the items a stored response was generated from — the
 * conversation before its output (what `previous_response_id` carried, then its own input) — as
 * OpenAI lists them: every item with an id, messages with typed content parts, newest first
 * unless `order=asc`, paged by `after` (an item id of the previous page) and `limit`.
 */
import { z } from 'zod';
import { invalidField } from '../../errors/domain-error';
import { parseInput } from '../../shared/validate';
import { newItemId } from './response-object';
import { integerTextOrNumber } from '../../shared/integer-text';
import type { ResponsesInputItem } from './responses-request';

/** OpenAI's `ResponseIncludable` values. */
const INCLUDABLE = [
  'file_search_call.results',
  'web_search_call.results',
  'web_search_call.action.sources',
  'message.input_image.image_url',
  'computer_call_output.output.image_url',
  'code_interpreter_call.outputs',
  'reasoning.encrypted_content',
  'message.output_text.logprobs',
] as const;
const includableValue = z.enum(INCLUDABLE, { message: `must be one of ${INCLUDABLE.join(', ')}` });
/** One value or a list (`include=a`, `include[]=a&include[]=b`), read as a list so a wrong value is named. */
const includable = z.preprocess((v) => (typeof v === 'string' ? [v] : v), z.array(includableValue).max(10));

/** GET /v1/responses/{id}: OpenAI's query parameters (`stream` only as false: a stored response is complete). */
export const retrieveQuerySchema = z.strictObject({
  include: includable.optional(),
  'include[]': includable.optional(),
  include_obfuscation: z.enum(['true', 'false']).optional(),
  starting_after: z.string().max(20).optional(),
  stream: z.enum(['false'], { message: 'streaming a stored response is not supported: it is complete; leave stream out' }).optional(),
});

/** Query strings carry text: `limit` is an integer in plain decimal digits, as on every other route. */
export const inputItemsQuerySchema = z.strictObject({
  after: z.string().min(1).max(256).optional(),
  limit: integerTextOrNumber(1, 100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  // Accepted for the SDK's sake; what it could add (image URLs, logprobs) is in the items already.
  // A value OpenAI does not define is a typo worth a 400, as it is there.
  include: includable.optional(),
  'include[]': includable.optional(),
});

export interface InputItemsPage {
  object: 'list';
  data: Array<Record<string, unknown>>;
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** Items without an id (the caller's input, history stored before items carried ids) get one, as OpenAI names them: `msg_…`, `fc_…`, `rs_…`. */
export function withItemIds(items: readonly ResponsesInputItem[]): ResponsesInputItem[] {
  const prefix = (item: ResponsesInputItem) => (item.type === 'function_call' ? 'fc' : item.type === 'reasoning' ? 'rs' : 'msg');
  return items.map((item) => ('id' in item && item.id ? item : { ...item, id: newItemId(prefix(item)) }));
}

/** A stored item as OpenAI lists it: a message's text content becomes a typed part. */
function listed(item: ResponsesInputItem, fallbackId: string): Record<string, unknown> {
  const id = ('id' in item && item.id) || fallbackId;
  if ('role' in item) {
    const kind = item.role === 'assistant' ? 'output_text' : 'input_text';
    const content =
      typeof item.content === 'string'
        ? [kind === 'output_text' ? { type: kind, text: item.content, annotations: [] } : { type: kind, text: item.content }]
        : item.content;
    return { id, type: 'message', role: item.role, status: item.status ?? 'completed', content };
  }
  return { ...item, id, status: ('status' in item && item.status) || 'completed' };
}

export function inputItemsPage(responseId: string, items: readonly ResponsesInputItem[], query: unknown): InputItemsPage {
  const q = parseInput(inputItemsQuerySchema, query);
  // Rows stored before items had ids: stable ones from the response and the position.
  const all = items.map((item, i) => listed(item, `msg_${responseId.replace(/^resp_/, '')}${String(i).padStart(4, '0')}`));
  const ordered = q.order === 'asc' ? all : [...all].reverse();
  let start = 0;
  if (q.after !== undefined) {
    const at = ordered.findIndex((item) => item.id === q.after);
    if (at < 0) throw invalidField(['after'], `no input item with id '${q.after}' in this response.`);
    start = at + 1;
  }
  const data = ordered.slice(start, start + q.limit);
  return {
    object: 'list',
    data,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data.at(-1)?.id as string | undefined) ?? null,
    has_more: start + q.limit < ordered.length,
  };
}
