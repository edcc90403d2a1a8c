/**
 * One HTTP call whose answer is read as it arrives (server-sent events), on undici's dispatch
 * API. `request()` wraps every response body in a Readable and the reader then walks it with
 * an async iterator; for a stream of small events that machinery cost more CPU per call than
 * the events themselves (bench profile), so the body here is a small queue fed straight from
 * the handler's callbacks.
 *
 * The promise settles when the status line and headers arrive (or the call fails before that).
 * The body is an async iterable of chunks with backpressure: past HIGH_WATER queued chunks the
 * socket is paused until the reader catches up. `destroy()` aborts the call; the caller's
 * `signal` does too. Timeouts are undici's own (`headersTimeout`, `bodyTimeout` in `options`).
 */
import type { Dispatcher } from 'undici';
import { callerAbortReason } from './collected-call';
import type { CallSignal } from '../../domain/shared/call-signal';
import { causeText } from '../../domain/errors/domain-error';

const HIGH_WATER = 32;

export class ChunkStream implements AsyncIterable<Buffer> {
  private readonly queue: Buffer[] = [];
  private waiter: { resolve: (r: IteratorResult<Buffer>) => void; reject: (err: unknown) => void } | undefined;
  private ended = false;
  private failure: Error | undefined;
  private paused = false;
  destroyed = false;

  constructor(private readonly controller: Dispatcher.DispatchController) {}

  /** From the handler: a chunk arrived. */
  push(chunk: Buffer): void {
    if (this.destroyed) return;
    if (this.waiter) {
      const { resolve } = this.waiter;
      this.waiter = undefined;
      resolve({ value: chunk, done: false });
      return;
    }
    this.queue.push(chunk);
    if (this.queue.length >= HIGH_WATER && !this.paused) {
      this.paused = true;
      this.controller.pause();
    }
  }

  /** From the handler: the body ended (err undefined) or failed. */
  finish(err?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = err === undefined || err instanceof Error ? err : new Error(causeText(err));
    const waiter = this.waiter;
    this.waiter = undefined;
    if (!waiter) return;
    if (err !== undefined && !this.destroyed) waiter.reject(err);
    else waiter.resolve({ value: undefined, done: true });
  }

  /** Stops reading: the call is aborted (the connection with it) unless the body had ended. */
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.queue.length = 0;
    if (!this.ended) this.controller.abort(new Error('The response body was destroyed by its reader.'));
    this.finish();
  }

  private next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.queue.shift();
    if (chunk) {
      if (this.paused && this.queue.length === 0) {
        this.paused = false;
        this.controller.resume();
      }
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.ended || this.destroyed) {
      return this.failure !== undefined && !this.destroyed ? Promise.reject(this.failure) : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return {
      next: () => this.next(),
      return: () => {
        this.destroy();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

export interface StreamedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: ChunkStream;
}

export function streamedCall(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal?: CallSignal): Promise<StreamedResponse> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let body: ChunkStream | undefined;
    const onAbort = () => controller?.abort(callerAbortReason(signal));
    const detach = () => signal?.removeEventListener('abort', onAbort);
    dispatcher.dispatch(options, {
      onRequestStart(c) {
        controller = c;
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      },
      onResponseStart(c, statusCode, headers) {
        body = new ChunkStream(c);
        resolve({ status: statusCode, headers: headers, body });
      },
      onResponseData(_c, chunk) {
        body?.push(chunk);
      },
      onResponseEnd() {
        detach();
        body?.finish();
      },
      onResponseError(_c, err) {
        detach();
        if (body) body.finish(err);
        else reject(err);
      },
    });
  });
}
