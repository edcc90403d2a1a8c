import { z } from 'zod';
import { VIDEO_DURATIONS, VIDEO_RESOLUTIONS } from '../catalog/model';
import { invalidField, type DomainError } from '../errors/domain-error';

export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4'] as const;

const url = z.string().min(1).max(2048);

export const DEFAULT_DURATION = '5s';
export const DEFAULT_RESOLUTION = '720p';

/**
 * POST /v1/video/quote: the pricing fields of queue (`duration`, `resolution`) and of motion
 * control (`duration_seconds`). No defaults here: which were sent decides whether the model takes
 * them (`fieldsNotTaken`), as queueing refuses a field its model does not take.
 */
export const quoteSchema = z
  .object({
    model: z.string().min(1).max(100),
    duration: z.enum(VIDEO_DURATIONS).optional(),
    resolution: z.enum(VIDEO_RESOLUTIONS).optional(),
    duration_seconds: z.number().min(1).max(30).int().optional(),
  })
  .strict();

/** What each kind of video model does not take (README: "a field a model does not take is a 400"). */
const NOT_TAKEN: Record<'video' | 'motion-control', Array<{ field: string; instead: string }>> = {
  video: [{ field: 'duration_seconds', instead: "'duration' (5s or 10s)" }],
  'motion-control': [
    { field: 'duration', instead: "'duration_seconds' (1 to 30)" },
    { field: 'resolution', instead: "'duration_seconds' alone" },
  ],
};

/** A 400 naming the first field sent that a model of this kind does not take; null if none. */
export function fieldNotTaken(kind: 'video' | 'motion-control', modelId: string, input: Record<string, unknown>): DomainError | null {
  const hit = NOT_TAKEN[kind].find((f) => input[f.field] !== undefined);
  return hit ? invalidField([hit.field], `${modelId} does not take it; it is priced by ${hit.instead}.`) : null;
}

/**
 * POST /v1/video/queue. Required per model (SPEC leaves it open; README documents it):
 * text-to-video needs `prompt`; image-to-video needs `image_url` (prompt optional);
 * reference-to-video needs `prompt` and 1-4 `reference_image_urls`. A field the model does not
 * take (an image for a text model) is refused rather than silently ignored.
 */
export const queueSchema = z
  .object({
    model: z.string().min(1).max(100),
    prompt: z.string().trim().min(1).max(5000).optional(),
    duration: z.enum(VIDEO_DURATIONS).default(DEFAULT_DURATION),
    resolution: z.enum(VIDEO_RESOLUTIONS).default(DEFAULT_RESOLUTION),
    aspect_ratio: z.enum(ASPECT_RATIOS).default('16:9'),
    audio: z.boolean().default(false),
    image_url: url.optional(),
    reference_image_urls: z.array(url).min(1).max(4).optional(),
  })
  .strict();

/** POST /v1/video/motion-control: image_url, video_url and duration_seconds are required. */
export const motionSchema = z
  .object({
    image_url: url,
    video_url: url,
    duration_seconds: z.number().min(1).max(30).int(),
    prompt: z.string().trim().max(5000).optional(),
    keep_original_sound: z.boolean().default(false),
    character_orientation: z.enum(['image', 'video']).default('image'),
    model: z.literal('svc-v3-motion-control').optional(),
  })
  .strict();

export const retrieveSchema = z.object({ id: z.string().min(1).max(100) }).strict();

export type QueueInput = z.output<typeof queueSchema>;
export type MotionInput = z.output<typeof motionSchema>;
