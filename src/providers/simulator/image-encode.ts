/**
 * The simulator's output encoding, as gpt-image models honour it: PNG by default, real JPEG
 * or WebP bytes for `output_format` (at `output_compression` quality), and with `background:
 * transparent` a real alpha channel (a round subject on a transparent ground). All of it is
 * sharp, in libvips' threads, at the end of the caller's pipeline: nothing here runs a pixel
 * loop on the event loop, and no raw pixels cross into JavaScript.
 */
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import type { GeneratedImage, ImageOptions } from '../ports';
import { PNG_CONTENT_TYPE } from './png';

const CONTENT_TYPES = { png: PNG_CONTENT_TYPE, jpeg: 'image/jpeg', webp: 'image/webp' } as const;

/** A disc of 45% of the shorter side, centred; composited `dest-in` it clears the alpha outside it. */
function disc(width: number, height: number): Buffer {
  const r = Math.min(width, height) * 0.45;
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><circle cx="${width / 2}" cy="${height / 2}" r="${r}" fill="#000"/></svg>`,
  );
}

/**
 * Finishes `pipeline` (an image of width x height) in the format the options ask for, with
 * the caller's `overlays` composited first (sharp keeps one composite list per pipeline).
 */
export async function encodeImage(
  pipeline: Sharp,
  width: number,
  height: number,
  options: ImageOptions = {},
  overlays: OverlayOptions[] = [],
): Promise<GeneratedImage> {
  const layers = options.background === 'transparent' ? [...overlays, { input: disc(width, height), blend: 'dest-in' as const }] : overlays;
  if (layers.length > 0) pipeline = pipeline.composite(layers);
  const format = options.output_format ?? 'png';
  // OpenAI takes 0–100; libvips' quality starts at 1 (0 made sharp throw: a 500 for a valid request).
  const quality = Math.max(1, options.output_compression ?? 100);
  // Speed over size for PNG: zlib level 1, no adaptive filter search.
  if (format === 'png') pipeline = pipeline.png({ compressionLevel: 1, adaptiveFiltering: false });
  else if (format === 'jpeg') pipeline = pipeline.flatten({ background: '#ffffff' }).jpeg({ quality });
  else pipeline = pipeline.webp({ quality, alphaQuality: 100 });
  return { data: await pipeline.toBuffer(), contentType: CONTENT_TYPES[format] };
}

/** An SVG rendered at its own size. */
export const fromSvg = (svg: Buffer): Sharp => sharp(svg);
