/** Server-sent events on a node:http response (Express's extends it), with backpressure. */
import type { ServerResponse } from 'node:http';

const EVENT_STREAM_HEADERS = { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' };

/**
 * Commits the 200 and its headers. They are not flushed on their own: they leave with the first
 * event, written right after, which saves one socket write per stream (node corks what one tick writes).
 */
export function startEventStream(res: ServerResponse, headers: Record<string, string>): void {
  // Connection: close set by a draining server stays (setHeader values survive writeHead).
  res.writeHead(200, res.hasHeader('connection') ? { ...headers, ...EVENT_STREAM_HEADERS, Connection: 'close' } : { ...headers, ...EVENT_STREAM_HEADERS });
}

/**
 * Writes one event (`data:` JSON or a literal such as `[DONE]`, with an optional `event:` name).
 * Answers a promise only when the socket is full, to be awaited before writing more (so a slow
 * client cannot grow our memory); otherwise nothing, so a stream's many events cost no await.
 */
export function writeEvent(res: ServerResponse, data: unknown, event?: string): Promise<void> | undefined {
  const head = event ? `event: ${event}\n` : '';
  // A response whose client already left answers write() with false and never emits 'drain'
  // (nor 'close' again): waiting for either would hang this handler forever.
  if (res.write(`${head}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`) || res.destroyed) return undefined;
  return new Promise<void>((resolve) => {
    res.once('drain', resolve);
    res.once('close', resolve);
  });
}

/** writeEvent, always awaitable: for the few events of a stream's start and end. */
export async function sendEvent(res: ServerResponse, data: unknown, event?: string): Promise<void> {
  await writeEvent(res, data, event);
}

/**
 * The life of a call: `signal` aborts when the client leaves before its answer is finished (not
 * after: aborting a finished call would cost an exception object per request) or, for a stream
 * given the server's drain deadline, when that passes; `cutByShutdown()` tells the second case,
 * in which the stream owes its client a terminal error event (so an SDK raises an error instead
 * of a silent end).
 */
export function callLifetime(res: ServerResponse, shutdownDeadline?: AbortSignal): { signal: AbortSignal; cutByShutdown(): boolean } {
  const abort = new AbortController();
  let cut = false;
  const onDeadline = () => {
    cut = true;
    abort.abort();
  };
  if (shutdownDeadline?.aborted) onDeadline();
  else shutdownDeadline?.addEventListener('abort', onDeadline, { once: true });
  res.once('close', () => {
    shutdownDeadline?.removeEventListener('abort', onDeadline);
    if (!res.writableFinished) abort.abort();
  });
  return { signal: abort.signal, cutByShutdown: () => cut && !res.destroyed };
}

export const SHUTDOWN_STREAM_ERROR = {
  message: 'The server is restarting and ended this stream; what was sent is billed. Retry the request.',
  type: 'service_unavailable',
  code: 'server_shutdown',
  param: null,
} as const;
