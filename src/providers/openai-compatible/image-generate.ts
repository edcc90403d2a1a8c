/**
 * Image generation: POST /images/generations, JSON in, images out (base64, or URLs fetched at
 * once), or, streamed, OpenAI's image events (image-stream.ts).
 */
import type { GeneratedImages, ImageGenerationRequest, ImageStreamEvent } from '../ports';
import type { FetchMedia } from '../shared/fetch-media';
import { imagesFromResponse } from './image-results';
import { streamImages } from './image-stream';
import type { UpstreamHttp } from './upstream-http';

export async function generateImages(http: UpstreamHttp, request: ImageGenerationRequest, fetchMedia: FetchMedia | undefined): Promise<GeneratedImages> {
  const response = await http.postJson('/images/generations', generationPayload(request), request.signal);
  return imagesFromResponse(response, fetchMedia);
}

export function streamGeneratedImages(
  http: UpstreamHttp,
  request: ImageGenerationRequest,
  fetchMedia: FetchMedia | undefined,
): AsyncIterable<ImageStreamEvent> {
  const payload = { ...generationPayload(request), stream: true, partial_images: request.partialImages ?? 0 };
  return streamImages(http, '/images/generations', payload, request.signal, fetchMedia);
}

function generationPayload(request: ImageGenerationRequest): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    model: request.upstreamModel,
    prompt: request.prompt,
    n: request.n,
    size: `${request.width}x${request.height}`,
    // No response_format, as for edits: OpenAI's gpt-image models refuse the field (400
    // unknown_parameter: every generation routed to one failed) and always answer base64;
    // a server that answers URLs (DALL·E's default) has them fetched at once (image-results.ts).
  };
  // Not OpenAI fields, but the compatible servers that host creative models accept them; they
  // are only sent when the caller set them, so a strict upstream never sees them unasked.
  if (request.negativePrompt !== undefined) payload.negative_prompt = request.negativePrompt;
  if (request.seed !== undefined) payload.seed = request.seed;
  if (request.stylePreset !== undefined) payload.style_preset = request.stylePreset;
  // gpt-image options the model's record allows, as the client sent them.
  Object.assign(payload, request.options);
  if (request.user !== undefined) payload.user = request.user;
  // `request.creative` is not sent: there is no wire field for "skip filtering"; the catalog
  // routes creative models to upstreams that do not filter.
  return payload;
}
