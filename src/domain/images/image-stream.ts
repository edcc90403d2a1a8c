/**
 * Streamed images (`stream: true`), as OpenAI's image API streams them: up to `partial_images`
 * previews of the image being made, then the image itself. The image is charged once, when it is
 * complete, at the price of the same call unstreamed; a stream that ends before that (its client
 * left, its provider failed, the server's drain deadline cut it) is charged nothing. A provider
 * that cannot stream answers its image as the one completed event.
 */
import { z } from 'zod';
import type { Billing, Hold } from '../credits/billing';
import { invalidField, invalidRequest, upstreamError } from '../errors/domain-error';
import { FIELD, words } from '../errors/field-path';
import type { Clock } from '../ports/clock';
import type { CallSignal } from '../shared/call-signal';
import type { CallLog } from '../requests/call-log';
import { microToCredits } from '../shared/money';
import { checkOutputImages } from './image-bounds';
import type { ImageOptions } from './image-options';
import { integerField } from './image-options';
import type { GeneratedImages, ImageEditProvider, ImageEditRequest, ImageGenerationRequest, ImageProvider, ImageStreamEvent } from './image-port';

/** The most previews a stream may ask for (OpenAI's bound). */
export const MAX_PARTIAL_IMAGES = 3;

/** `stream` and `partial_images`, as a JSON body (a boolean, a number) or a multipart one (text) gives them. */
export function streamFields(multipart: boolean) {
  return {
    stream: (multipart ? z.enum(['true', 'false']).transform((v) => v === 'true') : z.boolean()).nullable().optional(),
    partial_images: integerField(multipart, 0, MAX_PARTIAL_IMAGES).nullable().optional(),
  };
}

export interface StreamAsked {
  partialImages: number;
}

/**
 * What a request asks of a stream, or undefined for a plain call. A stream makes one image, sent
 * as base64 in its completed event: `n` above 1 and `response_format: url` are refused, as is
 * `partial_images` without `stream`, each a 400 naming the field.
 */
export function readStream(v: { stream?: boolean | null; partial_images?: number | null; n: number; response_format?: string }): StreamAsked | undefined {
  if (v.stream !== true) {
    if (v.partial_images != null) throw invalidField(['partial_images'], "only allowed when 'stream' is true.");
    return undefined;
  }
  if (v.n !== 1) throw invalidRequest(words`A streamed call makes one image: ${FIELD} must be 1, or leave 'stream' out.`, ['n']);
  if (v.response_format === 'url') {
    throw invalidRequest(words`A stream sends its image as b64_json; ${FIELD} 'url' cannot be streamed.`, ['response_format']);
  }
  return { partialImages: v.partial_images ?? 0 };
}

/** What every event of a stream says of its image, in OpenAI's names. */
export interface StreamedImageFacts {
  size: string;
  quality: string;
  background: string;
  output_format: string;
}

/** The facts of the image asked for: what the previews say. */
export function requestedFacts(size: { width: number; height: number }, options: ImageOptions): StreamedImageFacts {
  return {
    size: `${size.width}x${size.height}`,
    quality: options.quality ?? 'auto',
    background: options.background ?? 'auto',
    output_format: options.output_format ?? 'png',
  };
}

/** OpenAI's token usage of an image call, all counts 0: what the completed event says when the provider reported none. */
const NO_USAGE = { input_tokens: 0, input_tokens_details: { image_tokens: 0, text_tokens: 0 }, output_tokens: 0, total_tokens: 0 };

export type ImageStreamItem =
  | { type: 'partial'; index: number; b64: string; createdAt: number; facts: StreamedImageFacts }
  | {
      type: 'completed';
      b64: string;
      createdAt: number;
      facts: StreamedImageFacts;
      /** The provider's token usage (told, never what is billed). */
      usage: Record<string, unknown>;
      /** What the image cost (for a test key, what it would have cost), in credits. */
      costCredits: number;
    };

/** A stream admitted (counted and held): its rate-limit headers, and its events, which settle the call. */
export interface ImageStreamCall {
  headers: Record<string, string>;
  items: AsyncGenerator<ImageStreamItem, void, undefined>;
}

/** A provider's image stream, or its one answer as a completed event when it cannot stream. */
export function generationEvents(provider: ImageProvider, request: ImageGenerationRequest): AsyncIterable<ImageStreamEvent> {
  return provider.generateStream ? provider.generateStream(request) : whole(() => provider.generate(request));
}

export function editEvents(provider: ImageEditProvider, request: ImageEditRequest): AsyncIterable<ImageStreamEvent> {
  return provider.editStream ? provider.editStream(request) : whole(() => provider.edit(request));
}

async function* whole(call: () => Promise<GeneratedImages>): AsyncGenerator<ImageStreamEvent> {
  yield { type: 'completed', images: await call() };
}

const FORMAT_OF_TYPE: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/webp': 'webp' };

function completedFacts(requested: StreamedImageFacts, images: GeneratedImages, contentType: string): StreamedImageFacts {
  const about = images.about ?? {};
  return {
    size: about.size ?? requested.size,
    quality: about.quality ?? requested.quality,
    background: about.background ?? requested.background,
    output_format: FORMAT_OF_TYPE[contentType] ?? about.output_format ?? requested.output_format,
  };
}

export interface ImageStreamRun {
  billing: Billing;
  hold: Hold;
  /** What the image costs: the price of one image. */
  priceMicro: number;
  partialImages: number;
  facts: StreamedImageFacts;
  clock: Clock;
  /** The client's departure, and the server's drain deadline. */
  signal: CallSignal;
  /** Gives back a test key's simulator slot once the stream is over. */
  release?: () => void;
  /** The call's request-log row: the image's charge carries it; a stream that ends before, the writer. */
  log?: CallLog;
  events: AsyncIterable<ImageStreamEvent>;
}

/**
 * Relays the provider's previews (as many as were asked; more are dropped), then charges the
 * image and yields it. Each preview and the image are held to the size bound an unstreamed answer
 * is. The charge is committed before the completed event is yielded, as a plain call's is before
 * its answer goes out; a client gone by the time the image is made gets it never and pays
 * nothing. Stopping the iteration early (the door's client left) settles at zero and stops the
 * provider.
 */
export async function* runImageStream(run: ImageStreamRun): AsyncGenerator<ImageStreamItem, void, undefined> {
  let settled = false;
  const chargeNothing = async () => {
    if (settled) return;
    settled = true;
    await run.billing.settle(run.hold, 0);
  };
  const events = run.events[Symbol.asyncIterator]();
  const createdAt = () => Math.floor(run.clock.now() / 1000);
  try {
    let index = 0;
    for (let next = await events.next(); !next.done; next = await events.next()) {
      const event = next.value;
      if (event.type === 'partial') {
        if (index >= run.partialImages) continue;
        checkOutputImages([event.image]);
        yield { type: 'partial', index: index++, b64: event.image.data.toString('base64'), createdAt: createdAt(), facts: run.facts };
        continue;
      }
      const image = event.images[0];
      run.signal.throwIfAborted();
      if (image === undefined) throw upstreamError('The model provider answered no image.');
      checkOutputImages([image]);
      settled = true;
      run.log?.usedImages(1);
      const charged = await run.billing.settle(run.hold, run.priceMicro);
      yield {
        type: 'completed',
        b64: image.data.toString('base64'),
        createdAt: createdAt(),
        facts: completedFacts(run.facts, event.images, image.contentType),
        usage: event.images.about?.usage ?? NO_USAGE,
        costCredits: microToCredits(charged),
      };
      return;
    }
    throw upstreamError('The model provider ended the stream before its image.');
  } catch (err) {
    // A client that left is the door's to say (it saw the connection close).
    if (!run.signal.aborted) run.log?.failed(err);
    await chargeNothing();
    if (run.signal.aborted) return;
    throw err;
  } finally {
    await chargeNothing();
    // A provider that stopped on its own has nothing left to stop; one stopped here, its call.
    await Promise.resolve(events.return?.()).catch(() => undefined);
    run.release?.();
  }
}
