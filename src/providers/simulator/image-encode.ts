/**
 * The simulator's output encoding, as gpt-image models honour it: PNG by default, real JPEG
 * or WebP bytes for `output_format` (at `output_compression` quality), and with `background:
 * transparent` a real alpha channel (a round subject on a transparent ground). JPEG and WebP
 * are encoded by sharp, in libvips' thread pool, off the event loop.
 */
import sharp from 'sharp';
import type { GeneratedImage, ImageOptions } from '../ports';
import { encodePng, PNG_CONTENT_TYPE, type RgbaImage } from './png';

const CONTENT_TYPES = { jpeg: 'image/jpeg', webp: 'image/webp' } as const;

/** Clears the alpha of every pixel outside a centred disc. */
function cutOutBackground(image: RgbaImage): RgbaImage {
  const data = Buffer.from(image.data);
  const cx = (image.width - 1) / 2;
  const cy = (image.height - 1) / 2;
  const r2 = (Math.min(image.width, image.height) * 0.45) ** 2;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      if ((x - cx) ** 2 + (y - cy) ** 2 > r2) data[(y * image.width + x) * 4 + 3] = 0;
    }
  }
  return { ...image, data };
}

export async function encodeImage(image: RgbaImage, options: ImageOptions = {}): Promise<GeneratedImage> {
  const pixels = options.background === 'transparent' ? cutOutBackground(image) : image;
  const format = options.output_format ?? 'png';
  if (format === 'png') return { data: encodePng(pixels), contentType: PNG_CONTENT_TYPE };
  const raw = sharp(pixels.data, { raw: { width: pixels.width, height: pixels.height, channels: 4 } });
  const quality = options.output_compression ?? 100;
  const data = format === 'jpeg' ? await raw.flatten({ background: '#ffffff' }).jpeg({ quality }).toBuffer() : await raw.webp({ quality, alphaQuality: 100 }).toBuffer();
  return { data, contentType: CONTENT_TYPES[format] };
}
