/**
 * The HTTP calls of the Replicate adapter, answered as a plain outcome instead of thrown: the
 * provider decides per call what a failure means (a failed create is an error for the caller,
 * a failed poll of a video job usually just means "ask again later").
 */
import type { Propagate } from '../shared/propagate';
import { Agent, type Dispatcher } from 'undici';
import type { CallSignal } from '../../domain/shared/call-signal';
import { CallTimedOut, collectedCall, type CollectedResponse } from '../shared/collected-call';

/** The fields of Replicate's prediction object the adapter reads. */
export interface Prediction {
  id: string;
  /** 'starting' | 'processing' | 'succeeded' | 'failed' | 'canceled' | 'aborted' */
  status: string;
  output?: unknown;
  error?: unknown;
  logs?: unknown;
}

export type ReplicateOutcome =
  | { kind: 'ok'; prediction: Prediction }
  /** A non-2xx answer; `text` is the start of its body (errorForStatus reads it). */
  | { kind: 'http-error'; status: number; text: string; retryAfter?: string }
  /** No usable answer: network error, timeout, the caller's abort, or a 2xx that is no prediction. */
  | { kind: 'unreachable'; error: unknown; timedOut: boolean };

export interface CallBounds {
  timeoutMs: number;
  signal?: CallSignal;
  /** Per-call headers (Prefer, Cancel-After) on top of the adapter's own. */
  headers?: Record<string, string>;
}

/** A sync-mode answer may carry its outputs inline as data: URIs, so room for a few images. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export const TERMINAL = new Set(['succeeded', 'failed', 'canceled', 'aborted']);

export class ReplicateHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly getHeaders: Record<string, string>;
  private readonly postHeaders: Record<string, string>;

  /** `propagate`, tracing on: each request carries the current span's traceparent. */
  constructor(
    baseUrl: string,
    apiKey: string | undefined,
    dispatcher?: Dispatcher,
    private readonly propagate?: Propagate,
  ) {
    const base = new URL(baseUrl);
    this.origin = base.origin;
    // Replicate's own clients take the base with its `/v1`; both spellings name the same API.
    this.basePath = base.pathname.replace(/\/+$/, '').replace(/\/v1$/, '');
    this.ownsDispatcher = dispatcher === undefined;
    this.dispatcher = dispatcher ?? new Agent({ keepAliveTimeout: 30_000 });
    const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
    this.getHeaders = { ...auth, accept: 'application/json' };
    this.postHeaders = { ...this.getHeaders, 'content-type': 'application/json' };
  }

  get(path: string, bounds: CallBounds): Promise<ReplicateOutcome> {
    return this.send('GET', path, undefined, bounds);
  }

  post(path: string, payload: unknown, bounds: CallBounds): Promise<ReplicateOutcome> {
    return this.send('POST', path, JSON.stringify(payload), bounds);
  }

  /** Asks Replicate to stop a prediction; answers the status it gave (whatever the body), or null when none came. Never throws. */
  async cancel(id: string, timeoutMs: number): Promise<number | null> {
    const answer = await this.exchange('POST', `${predictionPath(id)}/cancel`, undefined, { timeoutMs });
    return answer instanceof Failure ? null : answer.status;
  }

  /** Closes the Agent this adapter created (a dispatcher passed in belongs to its owner). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private async send(method: 'GET' | 'POST', path: string, body: string | undefined, bounds: CallBounds): Promise<ReplicateOutcome> {
    const answer = await this.exchange(method, path, body, bounds);
    if (answer instanceof Failure) return { kind: 'unreachable', error: answer.error, timedOut: answer.error instanceof CallTimedOut };
    if (answer.status < 200 || answer.status >= 300) {
      return { kind: 'http-error', status: answer.status, text: answer.text, retryAfter: answer.retryAfter };
    }
    try {
      return { kind: 'ok', prediction: asPrediction(JSON.parse(answer.text)) };
    } catch (error) {
      return { kind: 'unreachable', error, timedOut: false };
    }
  }

  private async exchange(method: 'GET' | 'POST', path: string, body: string | undefined, bounds: CallBounds): Promise<CollectedResponse | Failure> {
    const built = body === undefined ? this.getHeaders : this.postHeaders;
    const base = this.propagate ? this.propagate(built) : built;
    try {
      return await collectedCall(
        this.dispatcher,
        { origin: this.origin, path: this.basePath + path, method, headers: bounds.headers ? { ...base, ...bounds.headers } : base, body },
        { limitBytes: MAX_BODY_BYTES, errorLimitBytes: MAX_ERROR_BODY_BYTES, timeoutMs: bounds.timeoutMs, signal: bounds.signal },
      );
    } catch (error) {
      return new Failure(error);
    }
  }
}

/** A call that got no answer at all, told apart from an answer without a throw. */
class Failure {
  constructor(readonly error: unknown) {}
}

export function predictionPath(id: string): string {
  return `/v1/predictions/${encodeURIComponent(id)}`;
}

function asPrediction(value: unknown): Prediction {
  const p = value as Partial<Prediction> | null;
  if (!p || typeof p !== 'object' || typeof p.id !== 'string' || p.id.length === 0 || typeof p.status !== 'string') {
    throw new Error('Replicate answered 2xx without a prediction object');
  }
  return p as Prediction;
}
