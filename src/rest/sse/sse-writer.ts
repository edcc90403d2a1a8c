/** Server-sent events on an Express response, with backpressure. */
import type { Response } from 'express';

export function startEventStream(res: Response, headers: Record<string, string>): void {
  res.status(200).set(headers).set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  res.flushHeaders();
}

/**
 * Writes one event (`data:` JSON or a literal such as `[DONE]`, with an optional `event:` name),
 * waiting for the socket to drain so a slow client cannot grow our memory.
 */
export async function sendEvent(res: Response, data: unknown, event?: string): Promise<void> {
  const head = event ? `event: ${event}\n` : '';
  // A response whose client already left answers write() with false and never emits 'drain'
  // (nor 'close' again): waiting for either would hang this handler forever.
  if (!res.write(`${head}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`) && !res.destroyed) {
    await new Promise<void>((resolve) => {
      res.once('drain', resolve);
      res.once('close', resolve);
    });
  }
}

/** Puts an already-read first result back in front of the rest of a generator. */
export async function* prepend<T>(first: IteratorResult<T, unknown>, rest: AsyncGenerator<T>): AsyncGenerator<T> {
  if (first.done) return;
  yield first.value;
  yield* rest;
}

/**
 * The life of a call: `signal` aborts when the client leaves before its answer is finished (not
 * after: aborting a finished call would cost an exception object per request) or, for a stream
 * given the server's drain deadline, when that passes; `cutByShutdown()` tells the second case,
 * in which the stream owes its client a terminal error event (so an SDK raises an error instead
 * of a silent end).
 */
export function callLifetime(res: Response, shutdownDeadline?: AbortSignal): { signal: AbortSignal; cutByShutdown(): boolean } {
  const abort = new AbortController();
  let cut = false;
  res.on('close', () => {
    if (!res.writableFinished) abort.abort();
  });
  const onDeadline = () => {
    cut = true;
    abort.abort();
  };
  if (shutdownDeadline?.aborted) onDeadline();
  else shutdownDeadline?.addEventListener('abort', onDeadline, { once: true });
  res.once('close', () => shutdownDeadline?.removeEventListener('abort', onDeadline));
  return { signal: abort.signal, cutByShutdown: () => cut && !res.destroyed };
}

export const SHUTDOWN_STREAM_ERROR = {
  message: 'The server is restarting and ended this stream; what was sent is billed. Retry the request.',
  type: 'service_unavailable',
  code: 'server_shutdown',
  param: null,
} as const;
