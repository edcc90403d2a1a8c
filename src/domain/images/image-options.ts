/**
 * The gpt-image request options (quality, background, output format and compression,
 * moderation, style; on edits, input fidelity). A model takes the ones its catalog record lists; any other is a 400
 * naming it, never accepted and dropped. Accepted options are forwarded to the provider as sent.
 */
import { z } from 'zod';
import { invalidRequest } from '../errors/domain-error';
import { FIELD, words } from '../errors/field-path';
import { integerText } from '../shared/integer-text';

export const IMAGE_OPTION_NAMES = ['quality', 'background', 'output_format', 'output_compression', 'moderation', 'style', 'input_fidelity'] as const;
export type ImageOptionName = (typeof IMAGE_OPTION_NAMES)[number];

export interface ImageOptions {
  quality?: 'auto' | 'high' | 'medium' | 'low' | 'hd' | 'standard';
  background?: 'auto' | 'transparent' | 'opaque';
  output_format?: 'png' | 'jpeg' | 'webp';
  output_compression?: number;
  moderation?: 'auto' | 'low';
  style?: 'vivid' | 'natural';
  /** Edits only: how closely the output keeps the input images' features. */
  input_fidelity?: 'high' | 'low';
}

/**
 * An integer field: a JSON number in a JSON body (`n: "2"` is a 400, as OpenAI answers it); in a
 * multipart body, where every field is text, plain decimal digits (integerText: `04` is a 400).
 */
export function integerField(multipart: boolean, min: number, max: number) {
  return multipart ? integerText(min, max) : z.number().min(min).max(max).int();
}

export function imageOptionFields(multipart: boolean) {
  return {
    quality: z.enum(['auto', 'high', 'medium', 'low', 'hd', 'standard']).optional(),
    background: z.enum(['auto', 'transparent', 'opaque']).optional(),
    output_format: z.enum(['png', 'jpeg', 'webp']).optional(),
    output_compression: integerField(multipart, 0, 100).optional(),
    moderation: z.enum(['auto', 'low']).optional(),
    style: z.enum(['vivid', 'natural']).optional(),
  };
}

/** What an edit takes besides imageOptionFields (OpenAI's ImageEditParams); a generation refuses it as unknown. */
export const editOnlyOptionFields = {
  input_fidelity: z.enum(['high', 'low']).optional(),
};

/** The options present in a validated request, checked against what the model takes. */
export function readImageOptions(values: Partial<Record<ImageOptionName, unknown>>, modelId: string, accepted: readonly ImageOptionName[]): ImageOptions {
  const options: Record<string, unknown> = {};
  for (const name of IMAGE_OPTION_NAMES) {
    if (values[name] === undefined) continue;
    if (!accepted.includes(name)) throw invalidRequest(words`The model '${modelId}' does not take '${FIELD}'.`, [name]);
    options[name] = values[name];
  }
  const o = options as ImageOptions;
  if (o.background === 'transparent' && o.output_format === 'jpeg') {
    throw invalidRequest('A transparent background needs output_format png or webp.', ['background']);
  }
  if (o.output_compression !== undefined && (o.output_format ?? 'png') === 'png') {
    throw invalidRequest(words`${FIELD} applies to jpeg and webp output.`, ['output_compression']);
  }
  return o;
}
