/**
 * The simulator's image-edit model: decodes the first input PNG and returns it tinted (and,
 * for some seeds, inverted) by seeded amounts, so the output visibly comes from the input.
 * Where a mask is given, only its transparent pixels are edited, as in OpenAI's edits.
 */
import type { GeneratedImage, ImageEditProvider, ImageEditRequest } from '../ports';
import { invalidRequest } from '../../domain/errors/domain-error';
import { MAX_INPUT_PIXELS, pngDimensions, resizeNearest, tryDecodePng, type RgbaImage } from './png';
import { encodeImage } from './image-encode';
import { createPrng, seedFromParts } from './seed';
import { yieldToEventLoop } from './event-loop';

/** Tints `source` towards a seeded colour; `mask` (same size) limits it to transparent pixels. */
function transform(source: RgbaImage, mask: RgbaImage | null, seed: Uint32Array): RgbaImage {
  const prng = createPrng(seed);
  const t0 = prng.int(256);
  const t1 = prng.int(256);
  const t2 = prng.int(256);
  const amount = 64 + prng.int(129); // 25%..75% of 256
  const flip = prng.int(2) === 1 ? 255 : 0; // v ^ 255 inverts a byte, v ^ 0 keeps it
  const src = source.data;
  const out = Buffer.allocUnsafe(src.length);
  const m = mask?.data;
  for (let i = 0; i < src.length; i += 4) {
    if (m !== undefined && m[i + 3] !== 0) {
      out[i] = src[i];
      out[i + 1] = src[i + 1];
      out[i + 2] = src[i + 2];
    } else {
      const r = src[i] ^ flip;
      const g = src[i + 1] ^ flip;
      const b = src[i + 2] ^ flip;
      out[i] = r + (((t0 - r) * amount) >> 8);
      out[i + 1] = g + (((t1 - g) * amount) >> 8);
      out[i + 2] = b + (((t2 - b) * amount) >> 8);
    }
    out[i + 3] = src[i + 3];
  }
  return { width: source.width, height: source.height, data: out };
}

/** Decodes an uploaded PNG, refusing (400, naming the field) what is not one or is too big. */
function decodeInput(data: Buffer | undefined, param: 'image' | 'mask'): RgbaImage {
  const size = data === undefined ? null : pngDimensions(data);
  if (size !== null && size.width * size.height > MAX_INPUT_PIXELS) {
    throw invalidRequest(`The ${param} is larger than 4096x4096 pixels.`, param);
  }
  const decoded = data === undefined || size === null ? null : tryDecodePng(data);
  if (decoded === null) throw invalidRequest(`The ${param} could not be decoded as PNG.`, param);
  return decoded;
}

export class SimulatorImageEditProvider implements ImageEditProvider {
  async edit(request: ImageEditRequest): Promise<GeneratedImage[]> {
    request.signal?.throwIfAborted();
    const decoded = decodeInput(request.images[0]?.data, 'image');
    const mask = request.mask === undefined ? null : decodeInput(request.mask.data, 'mask');

    const width = request.width ?? decoded.width;
    const height = request.height ?? decoded.height;
    const source = resizeNearest(decoded, width, height);
    const sizedMask = mask === null ? null : resizeNearest(mask, width, height);

    // The input bytes are part of the seed: editing another picture gives another tint.
    // Hashed once, not once per output.
    const inputKey = seedFromParts([...request.images.map((image) => image.data), request.mask?.data]).join('.');
    const images: GeneratedImage[] = [];
    for (let index = 0; index < request.n; index++) {
      if (index > 0) {
        await yieldToEventLoop();
        request.signal?.throwIfAborted();
      }
      const seed = seedFromParts(['edit', request.upstreamModel, request.prompt, request.seed, inputKey, index]);
      images.push(await encodeImage(transform(source, sizedMask, seed), request.options));
    }
    return images;
  }
}
