/**
 * The fake OpenAI upstream's image streams (`stream: true` on /images/generations and
 * /images/edits), on OpenAI's wire: `event: image_generation.partial_image` (or
 * `image_edit.partial_image`) with a base64 PNG preview per partial image asked for, then
 * `event: image_generation.completed` with the image and gpt-image's usage. The bytes are cut
 * inside an event's data line, with a pause, so an adapter that reads whole chunks only fails.
 */
import type { ServerResponse } from 'node:http';
import { PNG } from 'pngjs';

/** The usage the fake's completed event reports. */
export const FAKE_IMAGE_USAGE = { input_tokens: 50, input_tokens_details: { image_tokens: 40, text_tokens: 10 }, output_tokens: 272, total_tokens: 322 };

/** How a stream goes: to its end, or one of the failures an adapter must survive. */
export type ImageStreamMode =
  | 'ok'
  /** One preview, then the socket is destroyed. */
  | 'die-mid-stream'
  /** The previews, then a wait for the fake's release before the image. */
  | 'held-stream'
  /** The previews, then a clean end without the completed event. */
  | 'stream-without-done'
  /** One preview, then an `error` event, as OpenAI ends a failed stream. */
  | 'stream-error-event';

export interface ImageStreamAsk {
  kind: 'image_generation' | 'image_edit';
  partialImages: number;
  width: number;
  height: number;
  mode: ImageStreamMode;
  /** Settles when the test releases a held stream. */
  held: () => Promise<void>;
}

/** A real PNG of one grey level (sizes capped at 256 so a test cannot ask for megabytes by accident). */
export function greyPng(width: number, height: number, level: number): Buffer {
  const png = new PNG({ width: Math.min(width, 256), height: Math.min(height, 256) });
  png.data.fill(level);
  return PNG.sync.write(png);
}

const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;

export async function streamImageEvents(res: ServerResponse, ask: ImageStreamAsk): Promise<void> {
  res.socket?.setNoDelay(true);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const facts = { size: `${ask.width}x${ask.height}`, quality: 'low', background: 'opaque', output_format: 'png', created_at: 1_700_000_000 };
  const partials = Array.from({ length: ask.partialImages }, (_, i) =>
    event(`${ask.kind}.partial_image`, { b64_json: greyPng(ask.width, ask.height, 40 * (i + 1)).toString('base64'), partial_image_index: i, ...facts }),
  );
  if (ask.mode === 'die-mid-stream') {
    res.write(partials[0] ?? ': nothing yet\n\n');
    await pause(20);
    return void res.socket?.destroy();
  }
  if (ask.mode === 'stream-error-event') {
    return void res.end(
      (partials[0] ?? '') + `event: error\ndata: ${JSON.stringify({ error: { message: 'The image model failed.', type: 'server_error' } })}\n\n`,
    );
  }
  const head = Buffer.from(': keep-alive comment\n\n' + partials.join(''));
  // Cut inside the first data line, so the event arrives in two network chunks.
  const cut = Math.min(head.length, head.indexOf('data: ') + 40);
  res.write(head.subarray(0, cut));
  await pause(15);
  res.write(head.subarray(cut));
  if (ask.mode === 'stream-without-done') return void res.end();
  if (ask.mode === 'held-stream') await ask.held();
  res.end(event(`${ask.kind}.completed`, { b64_json: greyPng(ask.width, ask.height, 200).toString('base64'), ...facts, usage: FAKE_IMAGE_USAGE }));
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
