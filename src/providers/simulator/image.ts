/**
 * The simulator's text-to-image model: real PNGs of exactly the asked size, painted from a
 * seed of everything that would change a real model's output, so the same request gives
 * byte-identical files and another seed gives other files.
 */
import type { GeneratedImage, ImageGenerationRequest, ImageProvider } from '../ports';
import { contentPolicyViolation } from '../../domain/errors/domain-error';
import { paintPattern } from './png';
import { encodeImage } from './image-encode';
import { seedFromParts } from './seed';
import { yieldToEventLoop } from './event-loop';

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
      if (index > 0) {
        await yieldToEventLoop();
        request.signal?.throwIfAborted();
      }
      const seed = seedFromParts([
        'image',
        request.upstreamModel,
        request.prompt,
        request.negativePrompt,
        request.seed,
        request.stylePreset,
        index,
      ]);
      const pixels = paintPattern(request.width, request.height, seed);
      images.push(await encodeImage(pixels, request.options));
    }
    return images;
  }
}
