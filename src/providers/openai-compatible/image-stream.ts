/**
 * Streamed images, read as OpenAI sends them: server-sent events `image_generation.partial_image`
 * (or `image_edit.partial_image`), each a base64 preview, then `image_generation.completed` (or
 * `image_edit.completed`) with the image and its token usage.
 *
 * Contract with the caller (see ImageProvider.generateStream):
 * - fails before the first event (network, timeout, non-2xx) → throws before yielding anything,
 *   so nothing was sent to the client and nothing is billed;
 * - an `error` event, a broken event, or the end of the stream before the completed event → the
 *   previews already yielded stay yielded, then it throws upstream_error;
 * - otherwise yields the previews and one completed event, and stops reading there.
 * Stopping the iteration early destroys the upstream response. A server that ignores `stream`
 * and answers one JSON images response has its image answered as the completed event.
 */
import { DomainError, upstreamError } from '../../domain/errors/domain-error';
import type { GeneratedImages, ImageStreamEvent } from '../ports';
import type { CallSignal } from '../../domain/shared/call-signal';
import { asUpstreamError } from '../shared/upstream-errors';
import type { FetchMedia } from '../shared/fetch-media';
import { aboutOf, imageOfBase64, imagesFromResponse, type ImagesResponse } from './image-results';
import { SseDataParser } from './sse-parser';
import { isUndiciTimeout, type UpstreamHttp } from './upstream-http';

/** One event carries a whole image as base64: a 2048x2048 PNG is some 20 MB of text. */
const MAX_IMAGE_EVENT_CHARS = 64 * 1024 * 1024;

interface UpstreamImageEvent extends ImagesResponse {
  type?: unknown;
  b64_json?: unknown;
  error?: unknown;
}

export async function* streamImages(
  http: UpstreamHttp,
  path: string,
  payload: unknown,
  signal: CallSignal | undefined,
  fetchMedia: FetchMedia | undefined,
): AsyncGenerator<ImageStreamEvent> {
  const { body, contentType } = await http.openStream(path, payload, signal);
  if (contentType.startsWith('application/json')) {
    yield { type: 'completed', images: await imagesFromResponse(await http.readJson(body), fetchMedia) };
    return;
  }
  const parser = new SseDataParser(MAX_IMAGE_EVENT_CHARS);
  const decoder = new TextDecoder();
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      for (const data of parser.push(decoder.decode(chunk, { stream: true }))) {
        const event = eventOf(data);
        if (!event) continue;
        yield event;
        if (event.type === 'completed') return;
      }
    }
    for (const data of parser.end()) {
      const event = eventOf(data);
      if (!event) continue;
      yield event;
      if (event.type === 'completed') return;
    }
  } catch (err) {
    throw asUpstreamError(err, isUndiciTimeout(err));
  } finally {
    if (!body.destroyed) body.destroy();
  }
  throw upstreamError('The model provider stopped answering mid-stream.');
}

/** One event's `data`: a preview, the image, or (anything else the stream carries) nothing to relay. */
function eventOf(data: string): ImageStreamEvent | undefined {
  let event: UpstreamImageEvent;
  try {
    event = JSON.parse(data) as UpstreamImageEvent;
  } catch (err) {
    throw upstreamError(undefined, err);
  }
  if (event === null || typeof event !== 'object') throw upstreamError(undefined, new Error('Non-object stream event'));
  if ((event.error !== undefined && event.error !== null) || event.type === 'error') {
    throw new DomainError('upstream_error', 'The model provider failed mid-stream.', { cause: event.error ?? event });
  }
  const type = typeof event.type === 'string' ? event.type : '';
  if (type.endsWith('.partial_image')) return { type: 'partial', image: imageOfBase64(event.b64_json) };
  if (!type.endsWith('.completed')) return undefined;
  const images: GeneratedImages = [imageOfBase64(event.b64_json)];
  const about = aboutOf(event);
  if (about) images.about = about;
  return { type: 'completed', images };
}
