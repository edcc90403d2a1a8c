import type { IdempotentCall } from '../idempotency/idempotency-service';
import { z } from 'zod';
import type { Catalog } from '../catalog/catalog';
import type { KeyPrincipal } from '../keys/principal';
import { assertModelAllowed } from '../keys/permissions';
import type { Billing, Hold } from '../credits/billing';
import type { RateLimiter } from '../ratelimit/rate-limiter';
import { enforceRateLimit } from '../ratelimit/enforce';
import type { MediaLibrary } from '../media/media-library';
import { parseInput } from '../shared/validate';
import { creditsToMicro, microToCredits } from '../shared/money';
import { newId } from '../shared/ids';
import type { GeneratedImages, ImageEditRequest, ImageGenerationRequest, ImageProviders, ImageStreamEvent, InputFile } from './image-port';
import { invalidRequest, upstreamError } from '../errors/domain-error';
import { parseImageSize } from './image-size';
import { renderImages, type ImageResult, type ResponseFormat } from './image-output';
import { editOnlyOptionFields, imageOptionFields, integerField, readImageOptions } from './image-options';
import { checkInputImages, checkOutputImages } from './image-bounds';
import type { TestKeyBudget } from '../ratelimit/test-key-budget';
import type { CallSignal } from '../shared/call-signal';
import type { Clock } from '../ports/clock';
import { systemClock } from '../shared/system-clock';
import type { EditModel, ImageModel } from '../catalog/model';
import {
  editEvents,
  generationEvents,
  readStream,
  requestedFacts,
  runImageStream,
  streamFields,
  type ImageStreamCall,
  type StreamAsked,
  type StreamedImageFacts,
} from './image-stream';
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
  ...streamFields(multipart),
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

/** Input images of one edit, as OpenAI's gpt-image models take them. */
export const MAX_EDIT_IMAGES = 16;

type Read<R> = {
  model: ImageModel | EditModel;
  n: number;
  format: ResponseFormat;
  stream?: StreamAsked;
  facts: StreamedImageFacts;
  request: Omit<R, 'signal'>;
};

/**
 * POST /v1/images/generations and /v1/images/edits: billed n × the model's price per image, or,
 * streamed, the one image once it is complete (image-stream.ts).
 */
export class ImageService {
  constructor(
    private readonly catalog: Catalog,
    private readonly providers: ImageProviders,
    private readonly billing: Billing,
    private readonly limiter: RateLimiter,
    private readonly media: MediaLibrary,
    /** Bounds the simulator work of test keys (free, not unlimited). */
    private readonly testKeys: TestKeyBudget,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Reads a body far enough to tell a streamed call from a plain one (JSON's `true`, multipart's `'true'`). */
  isStream(input: unknown): boolean {
    const stream = typeof input === 'object' && input !== null ? (input as { stream?: unknown }).stream : undefined;
    return stream === true || stream === 'true';
  }

  /**
   * `idempotent`, when the request has an Idempotency-Key, names the call (its charge's
   * reference): see IdempotentCall. `log`, the call's request-log row, goes with the charge.
   */
  async generate(key: KeyPrincipal, input: unknown, idempotent?: IdempotentCall, signal?: CallSignal, log?: CallLog): Promise<ImageResult> {
    const g = this.readGeneration(key, input, log);
    return this.billed(key, g, undefined, idempotent, signal, log, () => this.providers.image(g.model, key.mode).generate({ ...g.request, signal }));
  }

  /** A streamed generation: counted and held before this resolves (so 402 and 429 are plain HTTP errors). */
  async generateStream(key: KeyPrincipal, input: unknown, signal: CallSignal, log?: CallLog): Promise<ImageStreamCall> {
    const g = this.readGeneration(key, input, log);
    const provider = this.providers.image(g.model, key.mode);
    return this.streamed(key, g, undefined, signal, log, (partialImages) => generationEvents(provider, { ...g.request, partialImages, signal }));
  }

  private readGeneration(key: KeyPrincipal, input: unknown, log: CallLog | undefined): Read<ImageGenerationRequest> {
    const v = parseInput(generationSchema, input);
    const model = this.catalog.require(v.model, 'image');
    log?.named(model.id);
    assertModelAllowed(key, model.id);
    // 'auto' is gpt-image's default (the model picks): here, the default size.
    const { width, height } = parseImageSize(v.size === undefined || v.size === 'auto' ? '1024x1024' : v.size);
    const options = readImageOptions(v, model.id, model.options);
    const stream = readStream(v);
    if (key.mode === 'test') this.testKeys.checkPixels(width, height, v.n);
    const request = {
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
    };
    return { model, n: v.n, format: v.response_format ?? 'url', stream, facts: requestedFacts({ width, height }, options), request };
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
    files: EditFiles,
    admitted: Record<string, string> | undefined,
    idempotent?: IdempotentCall,
    signal?: CallSignal,
    log?: CallLog,
  ): Promise<ImageResult> {
    const e = this.readEdit(key, fields, files, log);
    return this.billed(key, e, admitted, idempotent, signal, log, () => this.providers.edit(e.model, key.mode).edit({ ...e.request, signal }));
  }

  /** A streamed edit, admitted as `edit` is. */
  async editStream(
    key: KeyPrincipal,
    fields: unknown,
    files: EditFiles,
    admitted: Record<string, string> | undefined,
    signal: CallSignal,
    log?: CallLog,
  ): Promise<ImageStreamCall> {
    const e = this.readEdit(key, fields, files, log);
    const provider = this.providers.edit(e.model, key.mode);
    return this.streamed(key, e, admitted, signal, log, (partialImages) => editEvents(provider, { ...e.request, partialImages, signal }));
  }

  private readEdit(key: KeyPrincipal, fields: unknown, files: EditFiles, log: CallLog | undefined): Read<ImageEditRequest> {
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
    const stream = readStream(v);
    if (key.mode === 'test') this.testKeys.checkPixels(size?.width ?? input.width, size?.height ?? input.height, v.n);
    const request = {
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
    };
    // An edit that names no format gets both: clients written for dall-e-2 read `url`, those written
    // for gpt-image (the AI SDK's editImage, which cannot send the field) read `b64_json`, and
    // SPEC leaves edits' fields open. Naming one gets that one alone.
    return { model, n: v.n, format: v.response_format ?? 'url+b64_json', stream, facts: requestedFacts(size ?? input, options), request };
  }

  /**
   * Counts the call against the image rate limit (unless `admitted` says the door did, or it is
   * resumed), takes a test key's simulator slot and holds `amountMicro` (a resumed call holds
   * nothing: `resumed` is its hold), the hold carrying the call's row `log` to its charge. The
   * slot is given back when the hold is refused.
   */
  private async admit(
    key: KeyPrincipal,
    modelId: string,
    amountMicro: number,
    reference: string,
    admitted: Record<string, string> | undefined,
    resumed: Hold | undefined,
    log: CallLog | undefined,
  ) {
    const headers = resumed || admitted ? (admitted ?? {}) : await enforceRateLimit(this.limiter, key.keyId, 'image');
    // A test key's slot is taken before anything is held and given back when its work is done.
    const release = key.mode === 'test' ? this.testKeys.acquire(key.keyId) : undefined;
    try {
      return { headers, release, hold: resumed ?? (await this.billing.hold(key, amountMicro, modelId, reference, log)) };
    } catch (err) {
      release?.();
      throw err;
    }
  }

  /**
   * Holds the price of the n images asked for, calls the provider, stores the images, then charges
   * the ones delivered (a provider may answer fewer; more than n are not served); any failure, or
   * no image at all, charges nothing. A resumed call whose first run was charged is neither counted
   * nor held: it runs, and answers that charge.
   */
  private async billed<R>(
    key: KeyPrincipal,
    read: Read<R>,
    admitted: Record<string, string> | undefined,
    idempotent: IdempotentCall | undefined,
    /** The client's departure (absent with an Idempotency-Key: a retry collects the images). */
    signal: CallSignal | undefined,
    log: CallLog | undefined,
    call: () => Promise<GeneratedImages>,
  ): Promise<ImageResult> {
    const perImage = creditsToMicro(read.model.creditsPerImage);
    const reference = idempotent ? `img_${idempotent.id}` : newId('img');
    const resumed = await this.billing.resumed(key, idempotent, reference, read.model.id);
    const { headers, release, hold } = await this.admit(key, read.model.id, perImage * read.n, reference, admitted, resumed, log);
    try {
      let data: ImageResult['data'];
      let about: ImageResult['about'];
      try {
        const answer = await call();
        about = answer.about;
        const images = answer.slice(0, read.n);
        // A client gone while they were made (a provider that did not stop on the abort) gets nothing, and pays nothing.
        signal?.throwIfAborted();
        if (images.length === 0) throw upstreamError('The model provider answered no image.');
        checkOutputImages(images);
        data = await renderImages(images, read.format, key.accountId, this.media);
      } catch (err) {
        await this.billing.settle(hold, 0);
        throw err;
      }
      log?.usedImages(data.length);
      const charged = await this.billing.settle(hold, perImage * data.length);
      return { created: Math.floor(this.clock.now() / 1000), data, costCredits: microToCredits(charged), headers, ...(about ? { about } : {}) };
    } finally {
      release?.();
    }
  }

  /** Admits a stream of one image (held at its price) and hands its events to runImageStream, which settles it. */
  private async streamed<R>(
    key: KeyPrincipal,
    read: Read<R>,
    admitted: Record<string, string> | undefined,
    signal: CallSignal,
    log: CallLog | undefined,
    events: (partialImages: number) => AsyncIterable<ImageStreamEvent>,
  ): Promise<ImageStreamCall> {
    const asked = read.stream ?? { partialImages: 0 };
    const price = creditsToMicro(read.model.creditsPerImage);
    const { headers, release, hold } = await this.admit(key, read.model.id, price, newId('img'), admitted, undefined, log);
    const items = runImageStream({
      billing: this.billing,
      hold,
      priceMicro: price,
      partialImages: asked.partialImages,
      facts: read.facts,
      clock: this.clock,
      signal,
      release,
      log,
      events: events(asked.partialImages),
    });
    return { headers, items };
  }
}

type EditFiles = { images: InputFile[]; mask?: InputFile };
