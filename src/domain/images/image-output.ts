import type { GeneratedImage, ImageAnswerAbout } from './image-port';
import type { MediaLibrary } from '../media/media-library';

/**
 * How the images are answered: `url`, `b64_json`, or both (an edit that named neither: see
 * ImageService.edit).
 */
export type ResponseFormat = 'url' | 'b64_json' | 'url+b64_json';

export interface ImageResult {
  created: number;
  data: (({ url: string } | { b64_json: string } | { url: string; b64_json: string }) & { revised_prompt?: string })[];
  costCredits: number;
  headers: Record<string, string>;
  /** What the provider said besides the images, passed on to the client. */
  about?: ImageAnswerAbout;
}

/** url: stored in the media library behind a permanent tokened URL; b64_json: inline. */
export async function renderImages(images: GeneratedImage[], format: ResponseFormat, accountId: string, media: MediaLibrary): Promise<ImageResult['data']> {
  const revised = (img: GeneratedImage) => (img.revisedPrompt !== undefined ? { revised_prompt: img.revisedPrompt } : {});
  if (format === 'b64_json') return images.map((img) => ({ b64_json: img.data.toString('base64'), ...revised(img) }));
  const saving = await Promise.allSettled(images.map((img) => media.save(accountId, img.data, img.contentType)));
  const failed = saving.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    // The answer fails (nothing is charged): the images stored for it go too, or every retry
    // against a full disk would leave more of them behind.
    const kept = saving.flatMap((s) => (s.status === 'fulfilled' ? [s.value.id] : []));
    await media.discard(kept).catch(() => undefined);
    throw failed.reason;
  }
  const stored = saving.map((s) => (s as PromiseFulfilledResult<{ id: string; url: string }>).value);
  if (format === 'url') return images.map((img, i) => ({ url: stored[i].url, ...revised(img) }));
  return images.map((img, i) => ({ url: stored[i].url, b64_json: img.data.toString('base64'), ...revised(img) }));
}
