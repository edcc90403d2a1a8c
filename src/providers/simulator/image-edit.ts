/**
 * The simulator's image-edit model: decodes the first input image (PNG, JPEG or WebP) and
 * returns it tinted (and, for some seeds, inverted) by seeded amounts, so the output visibly
 * comes from the input. Where a mask is given, only its transparent pixels are edited, as in
 * OpenAI's edits. Decoding, resizing, the tint, the mask and the encoding are sharp pipelines
 * in libvips' threads, never a pixel loop on the event loop; without a mask each output is one
 * pipeline from the upload's bytes to the encoded file, so no raw pixels reach JavaScript. The
 * decoder is held to the catalog's pixel bound (limitInputPixels) behind the domain's header
 * check, and the inputs are hashed for the seed in slices that let other requests run.
 */
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import type { GeneratedImage, ImageEditProvider, ImageEditRequest, ImageStreamEvent, InputFile } from '../ports';
import { invalidRequest } from '../../domain/errors/domain-error';
import { FIELD, words, type FieldPath } from '../../domain/errors/field-path';
import { MAX_INPUT_PIXELS } from '../../domain/images/image-bounds';
import { rawOf, type RgbaImage } from './png';
import { encodeImage } from './image-encode';
import { createPrng, digestInSlices, seedFromParts } from './seed';
import { mediaSlots } from './media-slots';
import { simulatedImageStream } from './image-partials';

type Size = { width: number; height: number };

const undecodable = (path: FieldPath) =>
  invalidRequest(words`The ${FIELD} could not be decoded as a PNG, JPEG or WebP image within ${MAX_INPUT_PIXELS} pixels.`, path);

/** An upload as 8-bit sRGB with alpha, resized (nearest) when a size is given. */
function decoder(file: InputFile, size?: Size): Sharp {
  const pipeline = sharp(file.data, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' }).toColourspace('srgb').ensureAlpha();
  return size ? pipeline.resize(size.width, size.height, { fit: 'fill', kernel: 'nearest' }) : pipeline;
}

/** Runs sharp work on an upload; whatever sharp cannot read is a 400 naming the field. */
async function reading<T>(path: FieldPath, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch {
    throw undecodable(path);
  }
}

/**
 * Inverts `pipeline` for some seeds and answers the overlay that tints it towards a seeded
 * colour by a seeded amount (25%..75%): a solid colour of that opacity composited `atop`, which
 * keeps the image's own alpha and works whatever its bands (grey, RGB, with or without alpha).
 */
function tint(pipeline: Sharp, size: Size, seed: Uint32Array): { pipeline: Sharp; overlay: OverlayOptions } {
  const prng = createPrng(seed);
  const [r, g, b] = [prng.int(256), prng.int(256), prng.int(256)];
  const alpha = (64 + prng.int(129)) / 256;
  if (prng.int(2) === 1) pipeline = pipeline.negate({ alpha: false });
  return { pipeline, overlay: { input: { create: { ...size, channels: 4, background: { r, g, b, alpha } } }, blend: 'atop' } };
}

/** `edited` where the mask is transparent, `source` elsewhere (all three the same size, RGBA). */
async function masked(source: RgbaImage, edited: Buffer, mask: RgbaImage): Promise<Sharp> {
  // 255 where the mask is transparent (edit), 0 elsewhere (keep); then edited & m | source & ~m.
  // (One band stays one band only as b-w: sharp would widen it to sRGB on output.)
  const band = rawOf(mask, 1);
  const editHere = await sharp(mask.data, rawOf(mask)).extractChannel(3).threshold(1, { grayscale: false }).negate().toColourspace('b-w').raw().toBuffer();
  const keepHere = await sharp(editHere, band).negate().toColourspace('b-w').raw().toBuffer();
  const [editPart, keepPart] = await Promise.all([
    sharp(edited, rawOf(source)).boolean(editHere, 'and', band).raw().toBuffer(),
    sharp(source.data, rawOf(source)).boolean(keepHere, 'and', band).raw().toBuffer(),
  ]);
  // Made raw pixels before it is encoded: sharp runs a JPEG's flatten ahead of a boolean in one
  // pipeline, so the 4-band operand met a 3-band image (a 500 for every masked JPEG edit).
  const merged = await sharp(editPart, rawOf(source)).boolean(keepPart, 'or', rawOf(source)).raw().toBuffer();
  return sharp(merged, rawOf(source));
}

async function rgba(pipeline: Sharp): Promise<RgbaImage> {
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

export class SimulatorImageEditProvider implements ImageEditProvider {
  async edit(request: ImageEditRequest): Promise<GeneratedImage[]> {
    request.signal?.throwIfAborted();
    const first = request.images[0];
    if (first === undefined) throw invalidRequest('An image file is required.', ['image']);
    const wanted = request.width !== undefined && request.height !== undefined ? { width: request.width, height: request.height } : undefined;
    // The output size: the one asked for, or the input's (its header, read by sharp; nothing decoded).
    const size =
      wanted ??
      (await reading(['image'], async () => {
        const meta = await sharp(first.data, { limitInputPixels: MAX_INPUT_PIXELS }).metadata();
        if (!meta.width || !meta.height) throw new Error('no size');
        return { width: meta.width, height: meta.height };
      }));

    // Only the first image is drawn on, but every one must be an image a provider could read (a
    // truncated file as a second part was answered, and billed): each is decoded once, in turn.
    for (let i = 1; i < request.images.length; i++) {
      const file = request.images[i];
      await mediaSlots.run(() => reading(['image', i], () => decoder(file).raw().toBuffer()));
    }

    // The input bytes are part of the seed: editing another picture gives another tint.
    // Hashed once, not once per output, in slices between which other requests run.
    const digests: Buffer[] = [];
    for (const file of [...request.images, ...(request.mask ? [request.mask] : [])]) digests.push(await digestInSlices(file.data));
    const inputKey = seedFromParts(digests).join('.');
    const seedOf = (index: number) => seedFromParts(['edit', request.upstreamModel, request.prompt, request.seed, inputKey, index]);

    const images: GeneratedImage[] = [];
    if (request.mask === undefined) {
      for (let index = 0; index < request.n; index++) {
        request.signal?.throwIfAborted();
        const { pipeline, overlay } = tint(decoder(first, wanted), size, seedOf(index));
        images.push(await mediaSlots.run(() => reading(['image'], () => encodeImage(pipeline, size.width, size.height, request.options, [overlay]))));
      }
      return images;
    }
    const maskFile = request.mask;
    const [source, mask] = await mediaSlots.run(() =>
      Promise.all([reading(['image'], () => rgba(decoder(first, size))), reading(['mask'], () => rgba(decoder(maskFile, size)))]),
    );
    for (let index = 0; index < request.n; index++) {
      request.signal?.throwIfAborted();
      images.push(
        await mediaSlots.run(async () => {
          const { pipeline, overlay } = tint(sharp(source.data, rawOf(source)), size, seedOf(index));
          const edited = await pipeline.composite([overlay]).raw().toBuffer();
          return encodeImage(await masked(source, edited, mask), size.width, size.height, request.options);
        }),
      );
    }
    return images;
  }

  /** The same image the unstreamed edit makes, after its previews (image-partials.ts). */
  editStream(request: ImageEditRequest): AsyncIterable<ImageStreamEvent> {
    return simulatedImageStream({
      make: async () => (await this.edit({ ...request, n: 1 }))[0],
      partialImages: request.partialImages ?? 0,
      options: request.options ?? {},
      prompt: request.prompt,
      inputImages: request.images.length,
      signal: request.signal,
    });
  }
}
