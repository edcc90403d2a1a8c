/**
 * The simulator's image streams: the finished image (the same the unstreamed call makes), first
 * shown as up to three previews of it, each at the image's own size and format: the image reduced
 * to a 32nd of each side and blown back up in blocks, then to an 8th, then to half, so each is
 * finer than the last. Then the image, with a token usage as gpt-image reports one. The reductions
 * are sharp pipelines in libvips' threads, like everything the simulator draws.
 */
import sharp from 'sharp';
import type { GeneratedImage, GeneratedImages, ImageOptions, ImageStreamEvent } from '../ports';
import { countTokens } from '../../domain/chat/tokens';
import type { CallSignal } from '../../domain/shared/call-signal';
import { encodeImage } from './image-encode';
import { mediaSlots } from './media-slots';

/** How much each preview reduces the sides, coarsest first. */
const PREVIEW_REDUCTIONS = [32, 8, 2];

/** gpt-image's rough rate: a token per 64x64 pixels of output. */
const imageTokens = (width: number, height: number) => Math.ceil((width * height) / 4096);

/** A preview of `image`: reduced `by` times on each side, then enlarged back without smoothing. */
async function preview(image: GeneratedImage, width: number, height: number, by: number, options: ImageOptions): Promise<GeneratedImage> {
  const small = await sharp(image.data)
    .ensureAlpha()
    .resize(Math.max(1, Math.round(width / by)), Math.max(1, Math.round(height / by)), { fit: 'fill' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const blocks = sharp(small.data, { raw: { width: small.info.width, height: small.info.height, channels: 4 } }).resize(width, height, {
    fit: 'fill',
    kernel: 'nearest',
  });
  // Encoded as the image is: a transparent background clears what lies outside its subject again,
  // so a block that straddled the edge does not tint the ground.
  return encodeImage(blocks, width, height, options);
}

export interface SimulatedStream {
  /** Makes the finished image (one: a stream makes one). */
  make: () => Promise<GeneratedImage>;
  partialImages: number;
  options: ImageOptions;
  prompt: string;
  /** Edits: how many images went in, counted as gpt-image counts input image tokens. */
  inputImages: number;
  signal?: CallSignal;
}

export async function* simulatedImageStream(s: SimulatedStream): AsyncGenerator<ImageStreamEvent> {
  const image = await s.make();
  const { width, height } = await sharp(image.data).metadata();
  if (!width || !height) throw new Error('The simulator made an image without a size.');
  for (const by of PREVIEW_REDUCTIONS.slice(0, s.partialImages)) {
    s.signal?.throwIfAborted();
    yield { type: 'partial', image: await mediaSlots.run(() => preview(image, width, height, by, s.options)) };
  }
  const text = countTokens(s.prompt);
  const input = s.inputImages * imageTokens(width, height);
  const output = imageTokens(width, height);
  const images: GeneratedImages = [image];
  images.about = {
    usage: {
      input_tokens: text + input,
      input_tokens_details: { image_tokens: input, text_tokens: text },
      output_tokens: output,
      total_tokens: text + input + output,
    },
  };
  yield { type: 'completed', images };
}
