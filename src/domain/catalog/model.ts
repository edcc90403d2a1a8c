import { z } from 'zod';
import { IMAGE_OPTION_NAMES } from '../images/image-options';

/**
 * The catalog's shape. The built-in catalog and a MODELS_FILE are both validated against it at
 * load, so a typo in an operator's file stops start-up with the path of the bad field.
 */
export const VIDEO_DURATIONS = ['5s', '10s'] as const;
export const VIDEO_RESOLUTIONS = ['480p', '720p', '1080p'] as const;

export const PROVIDERS = ['simulator', 'openai-compatible', 'fal-queue', 'replicate'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

const route = z
  .object({
    /** A name unique in the catalog (metrics, /admin/upstreams, logs); defaults to `<provider>-<n>`, one per distinct upstream. */
    id: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/)
      .optional(),
    /** Which provider adapter serves the model. */
    provider: z.enum(PROVIDERS),
    /** The provider's own model id. */
    upstreamModel: z.string().min(1),
    baseUrl: z.string().url().optional(),
    /** Name of the environment variable holding the upstream API key (never the key itself). */
    apiKeyEnv: z
      .string()
      .regex(/^[A-Z][A-Z0-9_]*$/)
      .optional(),
    timeoutSeconds: z.number().positive().max(600).default(60),
    /**
     * Chat only: the name the output limit travels under. `as-sent` forwards the client's own
     * (`max_tokens` when it sent none); `max_tokens` is for servers that know no other.
     */
    maxTokensParam: z.enum(['as-sent', 'max_tokens', 'max_completion_tokens']).default('as-sent'),
    /** Lower is tried first; routes of one priority share the traffic by `weight`. */
    priority: z.number().int().min(0).max(1000).default(0),
    /** Relative share among the healthy routes of one priority. */
    weight: z.number().positive().max(1_000_000).default(1),
  })
  .superRefine((r, ctx) => {
    // Only the built-in simulator runs in-process; every other provider is reached over HTTP.
    if (r.provider !== 'simulator' && r.baseUrl === undefined) {
      ctx.addIssue({ code: 'custom', path: ['baseUrl'], message: `baseUrl is required when provider is '${r.provider}'` });
    }
  });

/** Every upstream call of one client request (`attempts`), all within `budgetSeconds`. */
const retry = z
  .object({
    attempts: z.number().int().min(1).max(10).default(3),
    budgetSeconds: z.number().positive().max(600).default(30),
  })
  .strict();

const base = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9.-]{1,80}$/),
  ownedBy: z.string().min(1),
  description: z.string().optional(),
  /** One upstream route, or `routes`: 1 to 8, tried by priority, then weight, with failover. */
  route: route.optional(),
  routes: z.array(route).min(1).max(8).optional(),
  retry: retry.optional(),
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

/** Which providers can serve each group. */
const SERVES: Record<string, readonly ProviderName[]> = {
  chat: ['simulator', 'openai-compatible'],
  image: ['simulator', 'openai-compatible', 'replicate'],
  'image-edit': ['simulator', 'openai-compatible'],
  video: ['simulator', 'fal-queue', 'replicate'],
  'motion-control': ['simulator', 'fal-queue', 'replicate'],
};

const rawCatalogSchema = z.object({
  /** What one credit costs a non-member, in USD (members pay this / 1.55). */
  usdPerCredit: z.number().positive(),
  models: z
    .array(z.discriminatedUnion('group', [chatModel, imageModel, editModel, videoModel, motionModel]))
    .min(1)
    .superRefine((models, ctx) => {
      const seen = new Set<string>();
      /** Each explicit route id, and the upstream it names (provider, base URL, key). */
      const upstreamOf = new Map<string, string>();
      models.forEach((m, i) => {
        if (seen.has(m.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `duplicate model id ${m.id}` });
        seen.add(m.id);
        if ((m.route === undefined) === (m.routes === undefined)) {
          ctx.addIssue({ code: 'custom', path: [i, 'routes'], message: 'a model names exactly one of route or routes' });
          return;
        }
        const routes = m.routes ?? [m.route!];
        const at = (j: number, field: string) => (m.routes ? [i, 'routes', j, field] : [i, 'route', field]);
        const ids = new Set<string>();
        routes.forEach((r, j) => {
          if (!SERVES[m.group].includes(r.provider)) {
            ctx.addIssue({
              code: 'custom',
              path: at(j, 'provider'),
              message: `provider '${r.provider}' cannot serve ${m.group} models (${SERVES[m.group].join(', ')} can)`,
            });
          }
          if (r.id === undefined) return;
          if (ids.has(r.id)) ctx.addIssue({ code: 'custom', path: at(j, 'id'), message: `route id ${r.id} appears twice in ${m.id}` });
          ids.add(r.id);
          const upstream = upstreamKey(r);
          const before = upstreamOf.get(r.id);
          if (before !== undefined && before !== upstream) {
            ctx.addIssue({
              code: 'custom',
              path: at(j, 'id'),
              message: `route id ${r.id} names another upstream elsewhere in the catalog (a route id is one provider, baseUrl and apiKeyEnv)`,
            });
          }
          upstreamOf.set(r.id, upstream);
        });
      });
    }),
});

type RawRoute = z.output<typeof route>;
const upstreamKey = (r: { provider: string; baseUrl?: string; apiKeyEnv?: string }) => `${r.provider}|${r.baseUrl ?? ''}|${r.apiKeyEnv ?? ''}`;

export type ModelRoute = RawRoute & { id: string };
export type RetryPolicy = z.output<typeof retry>;

/**
 * Every model's routes with their ids: an explicit one, else `<provider>-<n>`, numbered per
 * provider over the distinct upstreams (provider, base URL, key) in catalog order, so that two
 * models served by one upstream share its route (and its circuit breaker).
 */
function resolveRoutes(data: z.output<typeof rawCatalogSchema>) {
  const all = data.models.flatMap((m) => m.routes ?? [m.route!]);
  const taken = new Set(all.map((r) => r.id).filter((id): id is string => id !== undefined));
  // An upstream named explicitly somewhere keeps that name wherever it is left unnamed.
  const idOf = new Map(all.filter((r) => r.id !== undefined).map((r) => [upstreamKey(r), r.id!]));
  const counters = new Map<string, number>();
  const defaultId = (r: RawRoute) => {
    const key = upstreamKey(r);
    const known = idOf.get(key);
    if (known) return known;
    let n = counters.get(r.provider) ?? 0;
    let id: string;
    do id = `${r.provider}-${n++}`;
    while (taken.has(id));
    counters.set(r.provider, n);
    idOf.set(key, id);
    return id;
  };
  const models = data.models.map((m) => {
    const { route: single, routes: many, retry: policy, ...rest } = m;
    const routes = (many ?? [single!]).map((r) => ({ ...r, id: r.id ?? defaultId(r) })).sort((a, b) => a.priority - b.priority);
    return { ...rest, route: routes[0], routes, retry: policy ?? { attempts: 3, budgetSeconds: 30 } };
  });
  return { ...data, models };
}

export const catalogSchema = rawCatalogSchema.transform(resolveRoutes);

export type CatalogInput = z.input<typeof catalogSchema>;
export type CatalogData = z.output<typeof catalogSchema>;
export type CatalogModel = CatalogData['models'][number];
export type ChatModel = Extract<CatalogModel, { group: 'chat' }>;
export type ImageModel = Extract<CatalogModel, { group: 'image' }>;
export type EditModel = Extract<CatalogModel, { group: 'image-edit' }>;
export type VideoModel = Extract<CatalogModel, { group: 'video' }>;
export type MotionModel = Extract<CatalogModel, { group: 'motion-control' }>;
export type ModelGroup = CatalogModel['group'];
