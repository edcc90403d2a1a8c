/**
 * POST /v1/videos as OpenAI's Videos API takes it (`client.videos.create`): `model`, `prompt`,
 * `seconds` ('5' or '10'), `size` (`1280x720`: a resolution and an aspect ratio, video-sizes.ts)
 * and `input_reference`, an uploaded image or `{ image_url }` (an http(s) URL or a data: URL), for
 * the image-to-video models (their image) and reference-to-video (their one reference). It is
 * queued as /v1/video/queue queues, the same job, charged, rate-limited and webhooked the same way;
 * refusals name this request's fields.
 */
import { z } from 'zod';
import type { Catalog } from '../catalog/catalog';
import type { IdempotentCall } from '../idempotency/idempotency-service';
import type { InputFile } from '../images/image-port';
import { checkInputImage } from '../images/image-bounds';
import type { MediaLibrary } from '../media/media-library';
import type { KeyPrincipal } from '../keys/principal';
import { assertModelAllowed } from '../keys/permissions';
import type { UrlGuard } from '../ports/url-guard';
import type { CallLog } from '../requests/call-log';
import { invalidField } from '../errors/domain-error';
import { parseInput } from '../shared/validate';
import type { AcceptedJob, CheckedImage, VideoService } from './video-service';
import { fromSize, VIDEO_SIZES } from './video-sizes';

/** What OpenAI defaults to (720p, in the queue's default aspect ratio, 16:9). */
const DEFAULT_SIZE = '1280x720';
/** An image given inline, as a data: URL (the same bound as an upload's). */
const MAX_DATA_URL_CHARS = 28 * 1024 * 1024;
const CONTENT_TYPES = { png: 'image/png', jpeg: 'image/jpeg', webp: 'image/webp' } as const;

/** Text fields (multipart) or JSON alike: `seconds` may come as the number 5 from a JSON client. */
export const createVideoSchema = z.strictObject({
  model: z.string().min(1).max(100),
  prompt: z.string().max(5000).optional(),
  seconds: z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.enum(['5', '10'])).default('5'),
  size: z.string().max(32).default(DEFAULT_SIZE),
  input_reference: z
    .strictObject({
      image_url: z.string().min(1).max(MAX_DATA_URL_CHARS).optional(),
      file_id: z.string().max(256).optional(),
    })
    .optional(),
});

export class OpenAIVideos {
  constructor(
    private readonly deps: {
      catalog: Catalog;
      video: VideoService;
      urls: UrlGuard;
      /** Where an uploaded reference image is kept, so the provider can fetch it by URL. */
      media: MediaLibrary;
    },
  ) {}

  /** `upload`: the `input_reference` file part of a multipart request; `log`, the call's request-log row, is written with the job. */
  async create(key: KeyPrincipal, input: unknown, upload?: InputFile, idempotent?: IdempotentCall, log?: CallLog): Promise<AcceptedJob> {
    const v = parseInput(createVideoSchema, input);
    const model = this.deps.catalog.require(v.model, 'video');
    log?.named(model.id);
    assertModelAllowed(key, model.id);
    const frame = fromSize(v.size);
    if (!frame) throw invalidField(['size'], `no video model makes ${v.size.slice(0, 32)}; the sizes are ${VIDEO_SIZES.join(', ')}.`);
    const given = v.input_reference;
    if (upload && given) throw invalidField(['input_reference'], 'give either a file or an image_url, not both.');
    if (given?.file_id !== undefined)
      throw invalidField(['input_reference', 'file_id'], 'file ids are not taken here; upload the image or give its image_url.');
    const hasImage = upload !== undefined || given?.image_url !== undefined;
    if (model.input === 'text' && hasImage) throw invalidField(['input_reference'], `${model.id} does not take an image; an image-to-video model does.`);
    if (model.input !== 'text' && !hasImage) throw invalidField(['input_reference'], `is required for ${model.id} (an image, uploaded or by image_url).`);
    const body = { model: model.id, prompt: v.prompt, duration: `${v.seconds}s`, resolution: frame.resolution, aspect_ratio: frame.aspectRatio };

    const stored = await this.storedImage(key, upload ?? inlineImage(given?.image_url));
    const image: CheckedImage | undefined = stored
      ? { url: stored.url }
      : given?.image_url
        ? { url: await this.deps.urls.checkMediaUrl(given.image_url, ['input_reference', 'image_url']) }
        : undefined;
    try {
      return await this.deps.video.queue(key, body, idempotent, log, image);
    } catch (err) {
      // Refused (rate limit, balance, …): the stored image is no job's.
      if (stored) await this.deps.media.discard([stored.id]).catch(() => undefined);
      throw err;
    }
  }

  /** An image the gateway keeps for the provider to fetch: checked for its format and declared size first. */
  private async storedImage(key: KeyPrincipal, file: InputFile | undefined): Promise<{ id: string; url: string } | undefined> {
    if (!file) return undefined;
    const declared = checkInputImage(file, ['input_reference']);
    return this.deps.media.save(key.accountId, file.data, CONTENT_TYPES[declared.format]);
  }
}

/** A data: URL's bytes, as an upload; any other URL is fetched by the provider. */
function inlineImage(url: string | undefined): InputFile | undefined {
  if (!url?.startsWith('data:')) return undefined;
  const m = /^data:([\w.+-]+\/[\w.+-]+)?;base64,([A-Za-z0-9+/=\s]*)$/.exec(url);
  if (!m) throw invalidField(['input_reference', 'image_url'], 'a data: URL must be base64 (data:image/png;base64,…).');
  return { data: Buffer.from(m[2], 'base64'), filename: 'input_reference', contentType: m[1] ?? 'application/octet-stream' };
}
