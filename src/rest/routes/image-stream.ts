/**
 * Streamed images on the wire, as OpenAI's image API streams them: `event:
 * image_generation.partial_image` for each preview and `event: image_generation.completed` for
 * the image (`image_edit.*` for edits), each `data:` the event object with its `type`. An error
 * after the 200 travels as `event: error` in the error body's shape.
 */
import type { ServerResponse } from 'node:http';
import type { ImageStreamCall, ImageStreamItem } from '../../domain/images/image-stream';
import type { CallSignal } from '../../domain/shared/call-signal';
import {
  callLifetime,
  cutBeforeAnswer,
  endEventStream,
  sendEvent,
  startEventStream,
  unlessCutBeforeAnswer,
  writeEvent,
  type StreamTerms,
} from '../sse/sse-writer';
import { streamErrorBody } from './chat-routes';
import { callLogOf } from '../call-logs';

export type ImageStreamKind = 'image_generation' | 'image_edit';

/** What a stream the drain deadline cut tells its client: it had not been charged. */
const SHUTDOWN_IMAGE_STREAM_ERROR = {
  message: 'The server is restarting and ended this stream before its image; nothing was charged. Retry the request.',
  type: 'service_unavailable',
  code: 'server_shutdown',
  param: null,
} as const;

function wireEvent(kind: ImageStreamKind, item: ImageStreamItem): { name: string; data: Record<string, unknown> } {
  if (item.type === 'partial') {
    const name = `${kind}.partial_image`;
    return { name, data: { type: name, b64_json: item.b64, partial_image_index: item.index, created_at: item.createdAt, ...item.facts } };
  }
  const name = `${kind}.completed`;
  return { name, data: { type: name, b64_json: item.b64, created_at: item.createdAt, ...item.facts, usage: item.usage } };
}

/**
 * Answers a streamed image call. The 200 waits for the provider's first event, so a call that
 * fails before it (refused, unreachable, timed out) is an ordinary HTTP error, charged nothing.
 * A client that leaves, or the drain deadline, ends the stream where it is: nothing is charged
 * unless the completed event was reached.
 */
export async function answerImageStream(
  res: ServerResponse,
  kind: ImageStreamKind,
  terms: StreamTerms,
  open: (signal: CallSignal) => Promise<ImageStreamCall>,
): Promise<void> {
  const abort = callLifetime(res, terms.shutdownDeadline?.());
  const { headers, items } = await open(abort.signal).catch(unlessCutBeforeAnswer(abort));
  let next = await items.next().catch(unlessCutBeforeAnswer(abort));
  if (next.done && abort.signal.aborted) {
    if (abort.cutByShutdown()) throw cutBeforeAnswer();
    return;
  }
  startEventStream(res, headers, terms.stallMs);
  try {
    for (; !next.done && !abort.signal.aborted; next = await items.next()) {
      const { name, data } = wireEvent(kind, next.value);
      const full = writeEvent(res, data, name);
      if (full) await full;
    }
  } catch (err) {
    if (!abort.signal.aborted) await sendEvent(res, streamErrorBody(err), 'error');
  } finally {
    // Said in the call's row before the settling that writes it.
    if (abort.cutByShutdown()) callLogOf(res)?.failed(cutBeforeAnswer());
    // Returning the generator settles the call (at nothing) before the error event goes out.
    if (abort.signal.aborted) await items.return(undefined);
    if (abort.cutByShutdown()) await sendEvent(res, { error: SHUTDOWN_IMAGE_STREAM_ERROR }, 'error');
    endEventStream(res);
  }
}
