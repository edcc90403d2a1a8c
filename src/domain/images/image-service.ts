import type { IdempotentCall } from '../idempotency/idempotency-service';
import { z } from 'zod';
import type { Catalog } from '../catalog/catalog';
import type { KeyPrincipal } from '../keys/principal';
import { assertModelAllowed } from '../keys/permissions';
import type { Billing } from '../credits/billing';
import type { RateLimiter } from '../ratelimit/rate-limiter';
import { enforceRateLimit } from '../ratelimit/enforce';
import type { MediaLibrary } from '../media/media-library';
import { parseInput } from '../shared/validate';
import { creditsToMicro, microToCredits } from '../shared/money';
import { newId } from '../shared/ids';
import type { GeneratedImages, ImageProviders, InputFile } from './image-port';
import { invalidRequest, upstreamError } from '../errors/domain-error';
import { parseImageSize } from './image-size';
import { renderImages, type ImageResult, type ResponseFormat } from './image-output';
import { editOnlyOptionFields, imageOptionFields, integerField, readImageOptions } from './image-options';
import { checkInputImages, checkOutputImages } from './image-bounds';
import type { TestKeyBudget } from '../ratelimit/test-key-budget';
import type { CallSignal } from '../shared/call-signal';
import type { CallLog } from '../requests/call-log';

export const DEFAULT_IMAGE_MODEL = 'svc-creative-v8';
export const DEFAULT_EDIT_MODEL = 'svc-image-edit-1';

const common = (multipart: boolean) => ({
  prompt: z.string().trim().min(1).max(5000),
  n: integerField(multipart, 1, 4).default(1),
  size: z.string().max(20).optional(),
  // Absent: generations answer `url` (SPEC's default); edits, see ImageService.edit.
  response_format: z.enum(['url', 'b64_json']).optional(),
  seed: integerField(multipart, 0, 4_294_967_295).optional(),
  user: z.string().max(256).optional(),
});

const generationSchema = z
  .object({
    ...common(false),
    model: z.string().min(1).max(100).default(DEFAULT_IMAGE_MODEL),
    negative_prompt: z.string().max(5000).optional(),
    style_preset: z.string().trim().min(1).max(64).optional(),
    ...imageOptionFields(false),
  })
  .strict();

const editSchema = z
  .object({ ...common(true), model: z.string().min(1).max(100).default(DEFAULT_EDIT_MODEL), ...imageOptionFields(true), ...editOnlyOptionFields })
  .strict();

/** POST /v1/images/generations and /v1/images/edits: billed n × the model's price per image. */
/** Input images of one edit, as OpenAI's gpt-image models take them. */
export const MAX_EDIT_IMAGES = 16;

export class ImageService {
  constructor(
    private readonly catalog: Catalog,
    private readonly providers: ImageProviders,
    private readonly billing: Billing,
    private readonly limiter: RateLimiter,
    private readonly media: MediaLibrary,
    /** Bounds the simulator work of test keys (free, not unlimited). */
    private readonly testKeys: TestKeyBudget,
  ) {}

  /**
   * `idempotent`, when the request has an Idempotency-Key, names the call (its charge's
   * reference): see IdempotentCall. `log`, the call's request-log row, goes with the charge.
   */
  async generate(key: KeyPrincipal, input: unknown, idempotent?: IdempotentCall, signal?: CallSignal, log?: CallLog): Promise<ImageResult> {
    const v = parseInput(generationSchema, input);
    const model = this.catalog.require(v.model, 'image');
    log?.named(model.id);
    assertModelAllowed(key, model.id);
    // 'auto' is gpt-image's default (the model picks): here, the default size.
    const { width, height } = parseImageSize(v.size === undefined || v.size === 'auto' ? '1024x1024' : v.size);
    const options = readImageOptions(v, model.id, model.options);
    if (key.mode === 'test') this.testKeys.checkPixels(width, height, v.n);
    return this.billed(key, model.id, { creditsPerImage: model.creditsPerImage, n: v.n }, v.response_format ?? 'url', undefined, idempotent, signal, log, () =>
      this.providers.image(model, key.mode).generate({
        upstreamModel: model.route.upstreamModel,
        prompt: v.prompt,
        negativePrompt: v.negative_prompt,
        n: v.n,
        width,
        height,
        seed: v.seed,
        stylePreset: v.style_preset,
        creative: model.creative,
        options,
        user: v.user,
        signal,
      }),
    );
  }

  /**
   * Counts an edit against the image rate limit before its upload is read (the door calls this
   * ahead of the multipart parser), so a key past its limit cannot make us receive 50 MB.
   * Answers the rate-limit headers for `edit`.
   */
  admitEdit(key: KeyPrincipal): Promise<Record<string, string>> {
    return enforceRateLimit(this.limiter, key.keyId, 'image');
  }

  /**
   * Multipart edits: the form's text fields plus the uploaded image(s) and optional mask, admitted
   * by `admitEdit` (whose headers `admitted` are), or, when the door left that to the call (it has
   * an Idempotency-Key, whose claim may be a resumed call's), here. Inputs are checked by their declared size.
   */
  async edit(
    key: KeyPrincipal,
    fields: unknown,
    files: { images: InputFile[]; mask?: InputFile },
    admitted: Record<string, string> | undefined,
    idempotent?: IdempotentCall,
    signal?: CallSignal,
    log?: CallLog,
  ): Promise<ImageResult> {
    const v = parseInput(editSchema, fields);
    const model = this.catalog.require(v.model, 'image-edit');
    log?.named(model.id);
    assertModelAllowed(key, model.id);
    if (files.images.length === 0) throw invalidRequest('An image file is required.', ['image']);
    // Counted over both spellings of the field: 16 of `image` and one more of `image[]` came through.
    if (files.images.length > MAX_EDIT_IMAGES)
      throw invalidRequest(`At most ${MAX_EDIT_IMAGES} images may be edited at once; ${files.images.length} were sent.`, ['image']);
    const input = checkInputImages(files.images, files.mask);
    const size = v.size && v.size !== 'auto' ? parseImageSize(v.size) : undefined;
    const options = readImageOptions(v, model.id, model.options);
    if (key.mode === 'test') this.testKeys.checkPixels(size?.width ?? input.width, size?.height ?? input.height, v.n);
    // An edit that names no format gets both: clients written for dall-e-2 read `url`, those written
    // for gpt-image (the AI SDK's editImage, which cannot send the field) read `b64_json`, and
    // SPEC leaves edits' fields open. Naming one gets that one alone.
    const format = v.response_format ?? 'url+b64_json';
    return this.billed(key, model.id, { creditsPerImage: model.creditsPerImage, n: v.n }, format, admitted, idempotent, signal, log, () =>
      this.providers.edit(model, key.mode).edit({
        upstreamModel: model.route.upstreamModel,
        prompt: v.prompt,
        images: files.images,
        mask: files.mask,
        n: v.n,
        width: size?.width,
        height: size?.height,
        seed: v.seed,
        options,
        user: v.user,
        signal,
      }),
    );
  }

  /**
   * Count the call against the image rate limit (unless `admitted` says the door did), hold the
   * price of the n images asked for, call the provider, store the images, then charge the ones
   * delivered (a provider may answer fewer; more than n are not served); any failure, or no
   * image at all, charges nothing. A resumed call whose first run was charged is neither counted
   * nor held: it runs, and answers that charge.
   */
  private async billed(
    key: KeyPrincipal,
    modelId: string,
    asked: { creditsPerImage: number; n: number },
    format: ResponseFormat,
    admitted: Record<string, string> | undefined,
    idempotent: IdempotentCall | undefined,
    /** The client's departure (absent with an Idempotency-Key: a retry collects the images). */
    signal: CallSignal | undefined,
    log: CallLog | undefined,
    call: () => Promise<GeneratedImages>,
  ): Promise<ImageResult> {
    const perImage = creditsToMicro(asked.creditsPerImage);
    const reference = idempotent ? `img_${idempotent.id}` : newId('img');
    const resumed = await this.billing.resumed(key, idempotent, reference, modelId);
    const headers = resumed || admitted ? (admitted ?? {}) : await enforceRateLimit(this.limiter, key.keyId, 'image');
    // A test key's slot is taken before anything is held and given back when its work is done.
    const release = key.mode === 'test' ? this.testKeys.acquire(key.keyId) : undefined;
    try {
      const hold = resumed ?? (await this.billing.hold(key, perImage * asked.n, modelId, reference, log));
      let data: ImageResult['data'];
      let about: ImageResult['about'];
      try {
        const answer = await call();
        about = answer.about;
        const images = answer.slice(0, asked.n);
        // A client gone while they were made (a provider that did not stop on the abort) gets nothing, and pays nothing.
        signal?.throwIfAborted();
        if (images.length === 0) throw upstreamError('The model provider answered no image.');
        checkOutputImages(images);
        data = await renderImages(images, format, key.accountId, this.media);
      } catch (err) {
        await this.billing.settle(hold, 0);
        throw err;
      }
      log?.usedImages(data.length);
      const charged = await this.billing.settle(hold, perImage * data.length);
      return { created: Math.floor(Date.now() / 1000), data, costCredits: microToCredits(charged), headers, ...(about ? { about } : {}) };
    } finally {
      release?.();
    }
  }
}
