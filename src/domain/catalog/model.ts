import { z } from 'zod';
import { IMAGE_OPTION_NAMES } from '../images/image-options';

/**
 * The catalog's shape. The built-in catalog and a MODELS_FILE are both validated against it at
 * load, so a typo in an operator's file stops start-up with the path of the bad field.
 */
export const VIDEO_DURATIONS = ['5s', '10s'] as const;
export const VIDEO_RESOLUTIONS = ['480p', '720p', '1080p'] as const;

const route = z.object({
  /** Which provider adapter serves the model. */
  provider: z.enum(['simulator', 'openai-compatible', 'fal-queue']),
  /** The provider's own model id. */
  upstreamModel: z.string().min(1),
  baseUrl: z.string().url().optional(),
  /** Name of the environment variable holding the upstream API key (never the key itself). */
  apiKeyEnv: z.string().regex(/^[A-Z][A-Z0-9_]*$/).optional(),
  timeoutSeconds: z.number().positive().max(600).default(60),
  /**
   * Chat only: the name the output limit travels under. `as-sent` forwards the client's own
   * (`max_tokens` when it sent none); `max_tokens` is for servers that know no other.
   */
  maxTokensParam: z.enum(['as-sent', 'max_tokens', 'max_completion_tokens']).default('as-sent'),
}).superRefine((r, ctx) => {
  // Only the built-in simulator runs in-process; every other provider is reached over HTTP.
  if (r.provider !== 'simulator' && r.baseUrl === undefined) {
    ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: `baseUrl is required when provider is '${r.provider}'` });
  }
});

const base = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9.\-]{1,80}$/),
  ownedBy: z.string().min(1),
  description: z.string().optional(),
  route,
});

export const CHAT_INPUTS = ['text', 'image', 'audio', 'file'] as const;
export type ChatInput = (typeof CHAT_INPUTS)[number];

const chatModel = base.extend({
  group: z.literal('chat'),
  creditsPer10kTokens: z.number().int().positive(),
  /** What a prompt may contain besides text: image, audio and file content parts. */
  inputs: z.array(z.enum(CHAT_INPUTS)).min(1).default(['text']),
  /** Function tools (`tools`, `tool_choice`, tool messages). */
  tools: z.boolean().default(true),
  /** `response_format` json_object and json_schema. */
  structuredOutputs: z.boolean().default(true),
  defaultMaxTokens: z.number().int().positive().default(1024),
  maxOutputTokens: z.number().int().positive().default(8192),
});

const imageModel = base.extend({
  group: z.literal('image'),
  /** UI grouping label shown as `provider` in the model record. */
  providerLabel: z.string().min(1),
  creative: z.boolean().default(false),
  creditsPerImage: z.number().min(1).max(100).int(),
  /** The gpt-image options this model takes (forwarded as sent); others are refused. */
  options: z.array(z.enum(IMAGE_OPTION_NAMES)).default([]),
});

const editModel = base.extend({
  group: z.literal('image-edit'),
  creditsPerImage: z.number().min(1).max(100).int(),
  options: z.array(z.enum(IMAGE_OPTION_NAMES)).default([]),
});

const videoPrice = z.object({ '480p': z.number().int().positive(), '720p': z.number().int().positive(), '1080p': z.number().int().positive() });

const videoModel = base.extend({
  group: z.literal('video'),
  /** text: prompt only; image: needs image_url; reference: needs reference_image_urls. */
  input: z.enum(['text', 'image', 'reference']),
  credits: z.object({ '5s': videoPrice, '10s': videoPrice }),
});

const motionModel = base.extend({
  group: z.literal('motion-control'),
  creditsPerSecond: z.number().int().positive(),
});

export const catalogSchema = z.object({
  /** What one credit costs a non-member, in USD (members pay this / 1.55). */
  usdPerCredit: z.number().positive(),
  models: z
    .array(z.discriminatedUnion('group', [chatModel, imageModel, editModel, videoModel, motionModel]))
    .min(1)
    .superRefine((models, ctx) => {
      const seen = new Set<string>();
      models.forEach((m, i) => {
        if (seen.has(m.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate model id ${m.id}` });
        seen.add(m.id);
      });
    }),
});

export type CatalogInput = z.input<typeof catalogSchema>;
export type CatalogData = z.output<typeof catalogSchema>;
export type CatalogModel = CatalogData['models'][number];
export type ChatModel = Extract<CatalogModel, { group: 'chat' }>;
export type ImageModel = Extract<CatalogModel, { group: 'image' }>;
export type EditModel = Extract<CatalogModel, { group: 'image-edit' }>;
export type VideoModel = Extract<CatalogModel, { group: 'video' }>;
export type MotionModel = Extract<CatalogModel, { group: 'motion-control' }>;
export type ModelGroup = CatalogModel['group'];
export type ModelRoute = CatalogModel['route'];
