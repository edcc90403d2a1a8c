/** Server-sent events on a node:http response (Express's extends it), with backpressure. */
import type { ServerResponse } from 'node:http';
import { CallAbort, type CallSignal } from '../../domain/shared/call-signal';
import { DomainError } from '../../domain/errors/domain-error';

/** What a route's streams are given by the server: its drain deadline, and how long a stream may wait on a client that reads nothing. */
export interface StreamTerms {
  shutdownDeadline?: () => CallSignal;
  /** A stream whose socket stays full this long (its client reads nothing) is cut, and billed what it sent. */
  stallMs?: number;
}

const EVENT_STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/**
 * Commits the 200 and its headers. They are not flushed on their own: they leave with the first
 * event, written right after, which saves one socket write per stream (node corks what one tick writes).
 */
export function startEventStream(res: ServerResponse, headers: Record<string, string>, stallMs?: number): void {
  pendingOf(res).stallMs = stallMs;
  // Connection: close set by a draining server stays (setHeader values survive writeHead).
  res.writeHead(200, res.hasHeader('connection') ? { ...headers, ...EVENT_STREAM_HEADERS, Connection: 'close' } : { ...headers, ...EVENT_STREAM_HEADERS });
}

/** Events queued on a response and not yet written: everything one turn produces goes out as one write. */
interface Pending {
  text: string;
  scheduled: boolean;
  /** Set by holdEvents: queued events wait for the next sendEvent or endEventStream. */
  held: boolean;
  /** Set while the socket is full (the last write answered false): settles on drain or close. */
  full?: Promise<void>;
  /** StreamTerms.stallMs of the stream. */
  stallMs?: number;
}

const PENDING = Symbol('sse.pending');
/** How much held text (holdEvents) may wait: an upstream that goes on after its finish is written as it comes. */
const HELD_TEXT_LIMIT = 64 * 1024;
/**
 * How much one turn may queue before it is written at once. A provider whose events all come in
 * one turn (the simulator's, whose stream is a generator that never waits) queued its whole answer
 * before the first write and the first chance to see the socket full: a client that read nothing
 * could hold 90 MB of the gateway's memory per stream. Written here, the socket's fullness reaches
 * the route's loop, which then waits for it to drain.
 */
const TURN_TEXT_LIMIT = 64 * 1024;
type WithPending = ServerResponse & { [PENDING]?: Pending };

function pendingOf(res: WithPending): Pending {
  return (res[PENDING] ??= { text: '', scheduled: false, held: false });
}

/**
 * Writes what is queued. A response whose client already left answers write() with false and
 * never emits 'drain' (nor 'close' again): waiting for either would hang the stream, so a
 * destroyed response is never waited for.
 */
function flush(res: ServerResponse, p: Pending): void {
  p.scheduled = false;
  if (p.text === '' || p.held) return;
  const text = p.text;
  p.text = '';
  if (res.write(text) || res.destroyed) return;
  p.full = new Promise<void>((resolve) => {
    // A client that reads nothing would hold the stream (its upstream, its lease, its memory) for
    // as long as its socket stays open: past the stall deadline the stream is cut, as a client
    // that left is, and billed what it sent.
    const stall = p.stallMs === undefined ? undefined : setTimeout(() => res.destroy(), p.stallMs).unref();
    // Both listeners go with the first: a long stream to a slow reader waits many times, and a
    // 'close' listener left behind by each wait would pile up (MaxListenersExceededWarning).
    const done = () => {
      clearTimeout(stall);
      res.off('drain', done);
      res.off('close', done);
      p.full = undefined;
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/**
 * Queues one event (`data:` JSON or a literal such as `[DONE]`, with an optional `event:` name).
 * The events queued within one turn (all those one upstream read carried) leave as one write
 * after it, not one chunk each: node:http corks a turn's writes anyway, but every write still
 * costs a chunk header and its own buffers. Answers a promise only while the socket is full, to
 * be awaited before queueing more (so a slow client cannot grow our memory by more than one
 * turn's events); otherwise nothing, so a stream's many events cost no await.
 */
export function writeEvent(res: ServerResponse, data: unknown, event?: string): Promise<void> | undefined {
  const p = pendingOf(res);
  p.text += `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
  if (p.held && p.text.length > HELD_TEXT_LIMIT) p.held = false;
  if (!p.held && p.text.length > TURN_TEXT_LIMIT) {
    flush(res, p);
    return p.full;
  }
  if (!p.scheduled) {
    p.scheduled = true;
    process.nextTick(flush, res, p);
  }
  return p.full;
}

/**
 * Keeps what is queued, and what is queued next, from being written until the next sendEvent or
 * endEventStream. For a stream's last content events: what follows them (the usage, `[DONE]`,
 * the terminal response event) waits for the call's charge, and a client can do nothing with a
 * finished answer before its end that it could not do a millisecond later, so the end of a
 * stream leaves in one socket write instead of two (a write on loopback costs the gateway about
 * as much CPU as parsing the whole upstream stream). Bounded: past HELD_TEXT_LIMIT queued,
 * events are written as usual again.
 */
export function holdEvents(res: ServerResponse): void {
  pendingOf(res).held = true;
}

/** An event written now, after what is queued: for the few events of a stream's start and end. */
export async function sendEvent(res: ServerResponse, data: unknown, event?: string): Promise<void> {
  void writeEvent(res, data, event);
  await release(res);
}

/** Writes what is queued, held or not; settles when the socket can take more. */
function release(res: ServerResponse): Promise<void> | undefined {
  const p = pendingOf(res);
  p.held = false;
  flush(res, p);
  return p.full;
}

/**
 * Ends the response with what is queued, held or not, in the same call: a stream's last events
 * (the usage, `[DONE]`) and the end of its body leave together, not as two writes and an end.
 */
export function endEventStream(res: ServerResponse): void {
  const p = pendingOf(res);
  p.held = false;
  const text = p.text;
  // A flush already scheduled for this turn finds nothing left.
  p.text = '';
  if (text === '') res.end();
  else res.end(text);
}

/**
 * The life of a call: `signal` aborts when the client leaves before its answer is finished (not
 * after: aborting a finished call would cost an exception object per request) or, for a stream
 * given the server's drain deadline, when that passes; `cutByShutdown()` tells the second case,
 * in which the stream owes its client a terminal error event (so an SDK raises an error instead
 * of a silent end).
 */
export function callLifetime(res: ServerResponse, shutdownDeadline?: CallSignal): { signal: CallSignal; cutByShutdown(): boolean } {
  const abort = new CallAbort();
  let cut = false;
  const onDeadline = () => {
    cut = true;
    abort.abort();
  };
  if (shutdownDeadline?.aborted) onDeadline();
  else shutdownDeadline?.addEventListener('abort', onDeadline, { once: true });
  // A client that left before the call began (its 'close' already emitted) is gone all the same.
  if (res.destroyed && !res.writableFinished) abort.abort();
  res.once('close', () => {
    shutdownDeadline?.removeEventListener('abort', onDeadline);
    if (!res.writableFinished) abort.abort();
  });
  return { signal: abort, cutByShutdown: () => cut && !res.destroyed };
}

/**
 * A call the drain deadline cut before its answer began (a plain call waiting on its provider, a
 * stream before the provider's first event): nothing was sent and nothing is charged, so it is an
 * ordinary 503 the client may retry, not a bare connection reset or an empty 200 stream.
 */
export function cutBeforeAnswer(): DomainError {
  return new DomainError(
    'service_unavailable',
    'The server is restarting and ended this call before the model answered; nothing was charged. Retry the request.',
    {
      code: 'server_shutdown',
      retryAfterSeconds: 1,
    },
  );
}

/** A `.catch` for a call's answer: an error of a call the drain deadline cut becomes cutBeforeAnswer's 503. */
export const unlessCutBeforeAnswer =
  (abort: { cutByShutdown(): boolean }) =>
  (err: unknown): never => {
    throw abort.cutByShutdown() ? cutBeforeAnswer() : err;
  };

export const SHUTDOWN_STREAM_ERROR = {
  message: 'The server is restarting and ended this stream; what was sent is billed. Retry the request.',
  type: 'service_unavailable',
  code: 'server_shutdown',
  param: null,
} as const;
