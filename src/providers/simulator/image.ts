/**
 * The simulator's text-to-image model: real PNGs of exactly the asked size, painted from a
 * seed of everything that would change a real model's output, so the same request gives
 * byte-identical files and another seed gives other files. The picture is an SVG of a few
 * dozen shapes; rendering and encoding it are sharp's (libvips' threads), off the event loop.
 */
import type { GeneratedImage, ImageGenerationRequest, ImageProvider, ImageStreamEvent } from '../ports';
import { contentPolicyViolation } from '../../domain/errors/domain-error';
import { patternSvg } from './pattern';
import { encodeImage, fromSvg } from './image-encode';
import { mediaSlots } from './media-slots';
import { seedFromParts } from './seed';
import { simulatedImageStream } from './image-partials';

/** The test-key word that makes a standard (filtered) image model refuse the prompt. */
const POLICY_TRIGGER = '[policy]';

export class SimulatorImageProvider implements ImageProvider {
  async generate(request: ImageGenerationRequest): Promise<GeneratedImage[]> {
    request.signal?.throwIfAborted();
    // Creative models skip provider-side filtering, so only standard ones refuse.
    if (!request.creative && request.prompt.toLowerCase().includes(POLICY_TRIGGER)) {
      throw contentPolicyViolation();
    }
    const images: GeneratedImage[] = [];
    for (let index = 0; index < request.n; index++) {
      request.signal?.throwIfAborted();
      const seed = seedFromParts(['image', request.upstreamModel, request.prompt, request.negativePrompt, request.seed, request.stylePreset, index]);
      const { width, height } = request;
      images.push(await mediaSlots.run(() => encodeImage(fromSvg(patternSvg(width, height, seed)), width, height, request.options)));
    }
    return images;
  }

  /** The same image the unstreamed call makes, after its previews (image-partials.ts). */
  generateStream(request: ImageGenerationRequest): AsyncIterable<ImageStreamEvent> {
    return simulatedImageStream({
      make: async () => (await this.generate({ ...request, n: 1 }))[0],
      partialImages: request.partialImages ?? 0,
      options: request.options ?? {},
      prompt: request.prompt,
      inputImages: 0,
      signal: request.signal,
    });
  }
}
