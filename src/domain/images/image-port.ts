/**
 * The image capabilities as the domain sees them; providers implement ImageProvider and
 * ImageEditProvider, and the composition root supplies an ImageProviders.
 */
import type { CatalogModel } from '../catalog/model';
import type { ImageOptions } from './image-options';
import type { CallSignal } from '../shared/call-signal';

export interface GeneratedImage {
  data: Buffer;
  contentType: string;
  /** The prompt the provider says it drew from (dall-e-3 rewrites prompts), as it sent it. */
  revisedPrompt?: string;
}

/**
 * What a provider says of an images answer besides the images (gpt-image models: token usage,
 * and the size, quality, format and background they chose), in OpenAI's names, as it sent them.
 * Told to the client; never what is billed.
 */
export interface ImageAnswerAbout {
  usage?: Record<string, unknown>;
  size?: string;
  quality?: string;
  output_format?: string;
  background?: string;
}

/** A provider's images, with what it said about them when it said anything. */
export type GeneratedImages = GeneratedImage[] & { about?: ImageAnswerAbout };

export interface ImageGenerationRequest {
  upstreamModel: string;
  prompt: string;
  negativePrompt?: string;
  n: number;
  width: number;
  height: number;
  seed?: number;
  stylePreset?: string;
  /** True for the creative group, which skips provider-side content filtering. */
  creative: boolean;
  /** gpt-image options the model takes, as the client sent them. */
  options?: ImageOptions;
  user?: string;
  /** A streamed call: the partial previews wanted before the image (0 to 3). */
  partialImages?: number;
  signal?: CallSignal;
}

/**
 * One step of a streamed image: a preview of the image being made (coarse first, then finer), or
 * the finished image with what the provider said about it.
 */
export type ImageStreamEvent = { type: 'partial'; image: GeneratedImage } | { type: 'completed'; images: GeneratedImages };

export interface ImageProvider {
  generate(request: ImageGenerationRequest): Promise<GeneratedImages>;
  /** Absent: the provider cannot stream, and a streamed call gets its image as one completed event. */
  generateStream?(request: ImageGenerationRequest): AsyncIterable<ImageStreamEvent>;
}

export interface InputFile {
  data: Buffer;
  filename: string;
  contentType: string;
}

export interface ImageEditRequest {
  upstreamModel: string;
  prompt: string;
  images: InputFile[];
  mask?: InputFile;
  n: number;
  /** Output size; when absent the provider keeps the first input image's size. */
  width?: number;
  height?: number;
  seed?: number;
  options?: ImageOptions;
  user?: string;
  /** A streamed call: the partial previews wanted before the image (0 to 3). */
  partialImages?: number;
  signal?: CallSignal;
}

export interface ImageEditProvider {
  edit(request: ImageEditRequest): Promise<GeneratedImages>;
  /** Absent: the provider cannot stream, and a streamed call gets its image as one completed event. */
  editStream?(request: ImageEditRequest): AsyncIterable<ImageStreamEvent>;
}

/** Finds the provider that serves a model for a key's mode (test keys: the simulator). */
export interface ImageProviders {
  image(model: CatalogModel, mode: 'live' | 'test'): ImageProvider;
  edit(model: CatalogModel, mode: 'live' | 'test'): ImageEditProvider;
}
