import { z } from 'zod';
import { VIDEO_DURATIONS, VIDEO_RESOLUTIONS } from '../catalog/model';

export const ASPECT_RATIOS = ['16:9', '9:16', '1:1', '4:3', '3:4'] as const;

const url = z.string().min(1).max(2048);

export const quoteSchema = z
  .object({
    model: z.string().min(1).max(100),
    duration: z.enum(VIDEO_DURATIONS).default('5s'),
    resolution: z.enum(VIDEO_RESOLUTIONS).default('720p'),
    duration_seconds: z.number().int().min(1).max(30).optional(),
  })
  .strict();

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
    duration: z.enum(VIDEO_DURATIONS).default('5s'),
    resolution: z.enum(VIDEO_RESOLUTIONS).default('720p'),
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
    duration_seconds: z.number().int().min(1).max(30),
    prompt: z.string().trim().max(5000).optional(),
    keep_original_sound: z.boolean().default(false),
    character_orientation: z.enum(['image', 'video']).default('image'),
    model: z.literal('svc-v3-motion-control').optional(),
  })
  .strict();

export const retrieveSchema = z.object({ id: z.string().min(1).max(100) }).strict();

export type QueueInput = z.output<typeof queueSchema>;
export type MotionInput = z.output<typeof motionSchema>;
