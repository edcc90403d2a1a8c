/**
 * Turns the `data` array of an OpenAI images response into GeneratedImages. Each element is
 * either `{ b64_json }` (gpt-image, and most compatible servers) or `{ url }` (DALL·E by default);
 * a URL is downloaded through the injected fetchMedia, all of them in parallel.
 */
import { upstreamError } from '../../domain/errors/domain-error';
import type { GeneratedImage, GeneratedImages, ImageAnswerAbout } from '../ports';
import type { FetchMedia } from '../shared/fetch-media';

export interface ImagesResponse {
  data?: Array<UpstreamImage>;
  usage?: unknown;
  size?: unknown;
  quality?: unknown;
  output_format?: unknown;
  background?: unknown;
}

interface UpstreamImage {
  b64_json?: unknown;
  url?: unknown;
  revised_prompt?: unknown;
}

export async function imagesFromResponse(response: unknown, fetchMedia: FetchMedia | undefined): Promise<GeneratedImages> {
  const data = (response as ImagesResponse | null)?.data;
  if (!Array.isArray(data) || data.length === 0) {
    throw upstreamError(undefined, new Error('Upstream images response has no data'));
  }
  const images: GeneratedImages = await Promise.all(
    data.map(async (item): Promise<GeneratedImage> => {
      const image = await imageFromItem(item, fetchMedia);
      return typeof item?.revised_prompt === 'string' ? { ...image, revisedPrompt: item.revised_prompt } : image;
    }),
  );
  const about = aboutOf(response as ImagesResponse);
  if (about) images.about = about;
  return images;
}

/** Short strings only: what an untrusted upstream says is passed on, not trusted with room. */
const label = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= 64 ? v : undefined);

/** gpt-image's token usage: its counts, and its details' counts, numbers only. */
function usageOf(value: unknown): Record<string, unknown> | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value).slice(0, 16)) {
    if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
    else if (k.endsWith('_details') && v && typeof v === 'object' && !Array.isArray(v)) {
      const details = Object.fromEntries(
        Object.entries(v as Record<string, unknown>)
          .slice(0, 16)
          .filter(([, n]) => typeof n === 'number' && Number.isFinite(n)),
      );
      out[k] = details;
    }
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** What the answer (or a stream's completed event) says besides the images (OpenAI's ImagesResponse fields), when it says any. */
export function aboutOf(response: ImagesResponse): ImageAnswerAbout | undefined {
  const about: ImageAnswerAbout = {};
  const usage = usageOf(response.usage);
  if (usage) about.usage = usage;
  for (const field of ['size', 'quality', 'output_format', 'background'] as const) {
    const value = label(response[field]);
    if (value !== undefined) about[field] = value;
  }
  return Object.keys(about).length > 0 ? about : undefined;
}

/** An image sent as base64 (`b64_json`), its type read from its bytes. */
export function imageOfBase64(b64: unknown): GeneratedImage {
  if (typeof b64 !== 'string') throw upstreamError(undefined, new Error('Upstream image has no b64_json'));
  const data = Buffer.from(b64, 'base64');
  if (data.length === 0) throw upstreamError(undefined, new Error('Upstream image is empty'));
  return { data, contentType: sniffImageType(data) };
}

async function imageFromItem(item: UpstreamImage | null, fetchMedia?: FetchMedia): Promise<GeneratedImage> {
  if (typeof item?.b64_json === 'string') return imageOfBase64(item.b64_json);
  if (typeof item?.url === 'string') {
    if (!fetchMedia) throw upstreamError(undefined, new Error('Upstream returned an image URL and no fetchMedia is configured'));
    try {
      return await fetchMedia(item.url);
    } catch (err) {
      throw upstreamError("The model provider's image could not be downloaded.", err);
    }
  }
  throw upstreamError(undefined, new Error('Upstream image has neither b64_json nor url'));
}

/**
 * b64_json carries no media type, and gpt-image models may answer JPEG or WebP, so we look at
 * the magic bytes. PNG is the OpenAI default when nothing matches.
 */
export function sniffImageType(data: Buffer): string {
  if (data.length >= 4 && data[0] === 0x89 && data[1] === 0x50 && data[2] === 0x4e && data[3] === 0x47) return 'image/png';
  if (data.length >= 3 && data[0] === 0xff && data[1] === 0xd8 && data[2] === 0xff) return 'image/jpeg';
  if (data.length >= 12 && data.toString('latin1', 0, 4) === 'RIFF' && data.toString('latin1', 8, 12) === 'WEBP') {
    return 'image/webp';
  }
  return 'image/png';
}
