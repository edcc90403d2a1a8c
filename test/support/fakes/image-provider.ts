/**
 * An image provider that answers real PNGs: as many as asked, or as many as it is told, or fails
 * with a given error. It records every generation and edit it was sent; `during` runs while a
 * call is under way (a client leaving, say).
 */
import { PNG } from 'pngjs';
import type { CatalogModel } from '../../../src/domain/catalog/model';
import type {
  GeneratedImages,
  ImageAnswerAbout,
  ImageEditProvider,
  ImageEditRequest,
  ImageGenerationRequest,
  ImageProvider,
  ImageProviders,
} from '../../../src/domain/images/image-port';

export function pngImage(width = 64, height = 64): Buffer {
  return PNG.sync.write(new PNG({ width, height }));
}

export class FakeImageProvider implements ImageProvider, ImageEditProvider {
  readonly generations: ImageGenerationRequest[] = [];
  readonly edits: ImageEditRequest[] = [];
  /** How many images an answer has; unset: as many as asked. */
  count: number | undefined;
  /** When set, every call fails with it. */
  failure: Error | undefined;
  about: ImageAnswerAbout | undefined;
  during: (() => void) | undefined;

  async generate(request: ImageGenerationRequest): Promise<GeneratedImages> {
    this.generations.push(request);
    return this.answer(request.n);
  }

  async edit(request: ImageEditRequest): Promise<GeneratedImages> {
    this.edits.push(request);
    return this.answer(request.n);
  }

  get calls(): number {
    return this.generations.length + this.edits.length;
  }

  private answer(n: number): GeneratedImages {
    this.during?.();
    if (this.failure) throw this.failure;
    // Small images whatever the size asked: the service bounds what it serves, it does not decode it.
    const images: GeneratedImages = Array.from({ length: this.count ?? n }, () => ({ data: pngImage(), contentType: 'image/png' }));
    if (this.about) images.about = this.about;
    return images;
  }
}

/** Live keys are served by `live`, test keys by `test` (the simulator, in the service). */
export class FakeImageProviders implements ImageProviders {
  constructor(
    readonly live = new FakeImageProvider(),
    readonly test = new FakeImageProvider(),
  ) {}

  image(_model: CatalogModel, mode: 'live' | 'test'): ImageProvider {
    return mode === 'live' ? this.live : this.test;
  }

  edit(_model: CatalogModel, mode: 'live' | 'test'): ImageEditProvider {
    return mode === 'live' ? this.live : this.test;
  }
}
