/**
 * Content parts, read as OpenAI defines them: text is text; image, audio and file parts go to
 * models whose catalog record says they take them; anything else is a 400 that names the part
 * (`messages[2].content[1]`), never a silent drop.
 */
import { z } from 'zod';
import { invalidField } from '../errors/domain-error';
import type { FieldPath } from '../errors/field-path';
import { issuePath } from '../shared/validate';
import type { ChatInput } from '../catalog/model';
import type { ContentPart } from './chat-port';

/**
 * The OpenAI Agents SDK sends an assistant turn back with the returned message's own fields
 * copied onto its text part (`role`, `refusal: null`, `annotations`); OpenAI takes them, so they
 * are accepted here and, describing an answer rather than input, not forwarded.
 */
const textPart = z
  .strictObject({
    type: z.literal('text'),
    text: z.string().max(1_000_000),
    role: z.literal('assistant').optional(),
    refusal: z.null().optional(),
    annotations: z.array(z.unknown()).max(1000).optional(),
  })
  .transform(({ type, text }) => ({ type, text }));
const refusalPart = z.strictObject({ type: z.literal('refusal'), refusal: z.string().max(100_000) });
/** Standard base64, padded or not (what every SDK's encoder writes); anything else no provider decodes. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const isBase64 = (text: string) => text.length % 4 !== 1 && BASE64.test(text);
const DATA_IMAGE = /^data:image\/[a-z0-9.+-]+;base64,/i;

/** A data: URL or an https URL; the provider fetches it, the gateway never does. */
const imageUrl = z
  .string()
  .max(20_000_000)
  .refine((u) => DATA_IMAGE.test(u) || /^https?:\/\/[^\s]+$/i.test(u), { message: 'must be an http(s) URL or a data:image/...;base64, URL' })
  .refine((u) => !DATA_IMAGE.test(u) || isBase64(u.slice(u.indexOf(',') + 1)), { message: "the data URL's payload is not base64" });
const base64Data = z.string().max(20_000_000).refine(isBase64, { message: 'is not base64' });
const imagePart = z.strictObject({
  type: z.literal('image_url'),
  image_url: z.strictObject({ url: imageUrl, detail: z.enum(['auto', 'low', 'high']).optional() }),
});
const audioPart = z.strictObject({
  type: z.literal('input_audio'),
  input_audio: z.strictObject({ data: base64Data, format: z.enum(['wav', 'mp3']) }),
});
const filePart = z.strictObject({
  type: z.literal('file'),
  file: z
    .strictObject({ file_data: z.string().max(20_000_000).optional(), file_id: z.string().max(256).optional(), filename: z.string().max(256).optional() })
    .refine((f) => f.file_data !== undefined || f.file_id !== undefined, { message: 'needs file_data or file_id' }),
});

const PART_SCHEMAS = { text: textPart, refusal: refusalPart, image_url: imagePart, input_audio: audioPart, file: filePart } as const;
/** The catalog input each media part needs. */
const NEEDS: Partial<Record<keyof typeof PART_SCHEMAS, ChatInput>> = { image_url: 'image', input_audio: 'audio', file: 'file' };
/** Which parts each role may carry, as OpenAI allows them. */
const ROLE_PARTS: Record<string, ReadonlySet<string>> = {
  system: new Set(['text']),
  developer: new Set(['text']),
  tool: new Set(['text']),
  assistant: new Set(['text', 'refusal']),
  user: new Set(['text', 'image_url', 'input_audio', 'file']),
};

/** Validates the parts of one message's content for a model that takes `inputs`. */
export function readContentParts(
  raw: readonly { type: string }[],
  role: string,
  path: FieldPath,
  modelId: string,
  inputs: readonly ChatInput[],
): ContentPart[] {
  return raw.map((part, j) => {
    const at = [...path, j];
    const schema = PART_SCHEMAS[part.type as keyof typeof PART_SCHEMAS];
    if (!schema || !ROLE_PARTS[role]?.has(part.type)) {
      throw invalidField(at, `a ${role} message cannot carry a part of type '${String(part.type).slice(0, 40)}'.`);
    }
    const need = NEEDS[part.type as keyof typeof NEEDS];
    if (need && !inputs.includes(need)) {
      throw invalidField(at, `the model '${modelId}' does not accept ${need} input.`, 'unsupported_content');
    }
    const parsed = schema.safeParse(part);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw invalidField([...at, ...issuePath(issue.path)], issue.message);
    }
    return parsed.data;
  });
}
