/**
 * One HTTP call whose whole answer is wanted as text, on undici's dispatch API. `request()`
 * builds a readable stream per response and the caller then iterates it; for the JSON answers
 * of the hot path that cost more CPU per call than the rest of undici's work (bench profile),
 * so the body is collected straight from the handler's callbacks here.
 *
 * Bounds: a 2xx body past `limitBytes` aborts the call (an upstream that answers that much is
 * broken); any other status keeps only its first `errorLimitBytes` (enough to read the error).
 * The whole call has a deadline of `timeoutMs`; the caller's `signal` (a client that hung up)
 * aborts it too. No timer or listener outlives the call.
 */
import type { Dispatcher } from 'undici';
import type { CallSignal } from '../../domain/shared/call-signal';

export interface CollectedResponse {
  status: number;
  text: string;
  /** The upstream's Retry-After on a failure (a 429 or 503 saying when to come back). */
  retryAfter?: string;
}

export class CallTimedOut extends Error {
  constructor(ms: number) {
    super(`Upstream call exceeded ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

export class ResponseTooLarge extends Error {
  constructor(limit: number) {
    super(`Upstream response larger than ${limit} bytes`);
  }
}

/** Why a call its caller aborted ends: the caller's own reason when it gave an Error. */
export function callerAbortReason(signal: CallSignal | undefined): Error {
  return signal?.reason instanceof Error ? signal.reason : new Error('The caller aborted.');
}

export function collectedCall(
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  bounds: { limitBytes: number; errorLimitBytes: number; timeoutMs: number; signal?: CallSignal },
): Promise<CollectedResponse> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let pendingAbort: Error | undefined;
    const abort = (reason: Error) => {
      if (controller) controller.abort(reason);
      else pendingAbort ??= reason;
    };
    const timer = setTimeout(() => abort(new CallTimedOut(bounds.timeoutMs)), bounds.timeoutMs);
    const onCallerAbort = () => abort(callerAbortReason(bounds.signal));
    const done = () => {
      clearTimeout(timer);
      bounds.signal?.removeEventListener('abort', onCallerAbort);
    };
    if (bounds.signal?.aborted) onCallerAbort();
    else bounds.signal?.addEventListener('abort', onCallerAbort, { once: true });

    const chunks: Buffer[] = [];
    const finish = () => {
      done();
      resolve({ status, text: (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'), retryAfter });
    };
    let size = 0;
    let status = 0;
    let limit = bounds.limitBytes;
    let truncated = false;
    let retryAfter: string | undefined;
    dispatcher.dispatch(options, {
      onRequestStart(c) {
        controller = c;
        if (pendingAbort) c.abort(pendingAbort);
      },
      onResponseStart(_c, statusCode, headers) {
        status = statusCode;
        if (statusCode < 200 || statusCode >= 300) {
          limit = bounds.errorLimitBytes;
          const value = headers['retry-after'];
          retryAfter = Array.isArray(value) ? value[0] : value;
        }
      },
      onResponseData(c, chunk) {
        if (truncated) return;
        size += chunk.length;
        if (size <= limit) {
          chunks.push(chunk);
        } else if (status < 200 || status >= 300) {
          // An error body: what fits is enough to read it; the rest is not read.
          chunks.push(chunk.subarray(0, chunk.length - (size - limit)));
          truncated = true;
          finish();
          c.abort(new ResponseTooLarge(limit));
        } else {
          c.abort(new ResponseTooLarge(limit));
        }
      },
      onResponseEnd: finish,
      onResponseError(_c, err) {
        done();
        if (!truncated) reject(err);
      },
    });
  });
}
