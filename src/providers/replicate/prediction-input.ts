/**
 * Where a prediction is created and with what input. Only the fields a request set are sent:
 * Replicate validates input against each model's schema, and a model may refuse a field it
 * does not know.
 */
import type { ImageGenerationRequest, VideoJobSpec } from '../ports';

export interface CreateCall {
  path: string;
  body: Record<string, unknown>;
}

/**
 * `owner/name` runs the model's latest version through the models endpoint (the only way to run
 * Replicate's official models); `owner/name:version` (or a bare version id) pins one version.
 */
export function createCall(upstreamModel: string, input: Record<string, unknown>): CreateCall {
  const colon = upstreamModel.indexOf(':');
  if (colon >= 0 || !upstreamModel.includes('/')) {
    return { path: '/v1/predictions', body: { version: upstreamModel.slice(colon + 1), input } };
  }
  const [owner, name] = upstreamModel.split('/', 2) as [string, string];
  return { path: `/v1/models/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/predictions`, body: { input } };
}

export function imageInput(request: ImageGenerationRequest): Record<string, unknown> {
  const input: Record<string, unknown> = {
    prompt: request.prompt,
    num_outputs: request.n,
    width: request.width,
    height: request.height,
  };
  if (request.seed !== undefined) input.seed = request.seed;
  if (request.negativePrompt !== undefined) input.negative_prompt = request.negativePrompt;
  // The creative group is served without provider-side filtering; other requests keep the
  // model's own checker (sending `false` would still be a field some models refuse).
  if (request.creative) input.disable_safety_checker = true;
  // gpt-image options and style presets have no Replicate counterpart common to its models.
  return input;
}

export function videoInput(spec: VideoJobSpec): Record<string, unknown> {
  const input: Record<string, unknown> = { duration: spec.durationSeconds };
  if (spec.prompt !== undefined) input.prompt = spec.prompt;
  if (spec.resolution !== undefined) input.resolution = spec.resolution;
  if (spec.aspectRatio !== undefined) input.aspect_ratio = spec.aspectRatio;
  if (spec.imageUrl !== undefined) input.image = spec.imageUrl;
  if (spec.referenceImageUrls !== undefined && spec.referenceImageUrls.length > 0) input.reference_images = spec.referenceImageUrls;
  if (spec.videoUrl !== undefined) input.video = spec.videoUrl;
  if (spec.audio !== undefined) input.generate_audio = spec.audio;
  if (spec.keepOriginalSound !== undefined) input.keep_original_sound = spec.keepOriginalSound;
  if (spec.characterOrientation !== undefined) input.character_orientation = spec.characterOrientation;
  return input;
}
