/**
 * The HTTP calls of the fal queue adapter, answered as a plain outcome instead of thrown: the
 * provider decides per call what a failure means (a failed submit is an error for the caller,
 * a failed poll usually just means "ask again later").
 */
import type { Propagate } from '../shared/propagate';
import { Agent, type Dispatcher, request } from 'undici';
import { readText } from '../shared/read-text';

export type FalOutcome =
  | { kind: 'ok'; status: number; json: unknown }
  /** The upstream answered with a non-2xx status; `text` is the start of its body, for logs. */
  | { kind: 'http-error'; status: number; text: string }
  /** No usable answer: network error, timeout, or a 2xx whose body is not JSON. */
  | { kind: 'unreachable'; error: unknown };

/** Queue answers are small JSON documents; anything bigger is not one. */
const MAX_BODY_BYTES = 1024 * 1024;

export class FalHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly getHeaders: Record<string, string>;
  private readonly postHeaders: Record<string, string>;

  constructor(
    apiKey: string | undefined,
    private readonly timeoutMs: number,
    dispatcher?: Dispatcher,
    /** Tracing on: each request carries the current span's traceparent. */
    private readonly propagate?: Propagate,
  ) {
    this.ownsDispatcher = dispatcher === undefined;
    this.dispatcher = dispatcher ?? new Agent({ keepAliveTimeout: 30_000 });
    // fal authenticates with `Key <secret>`, not `Bearer`.
    const auth: Record<string, string> = apiKey ? { authorization: `Key ${apiKey}` } : {};
    this.getHeaders = { ...auth, accept: 'application/json' };
    this.postHeaders = { ...this.getHeaders, 'content-type': 'application/json' };
  }

  get(url: string): Promise<FalOutcome> {
    return this.send(url, 'GET', undefined);
  }

  post(url: string, payload: unknown): Promise<FalOutcome> {
    return this.send(url, 'POST', JSON.stringify(payload));
  }

  /** A PUT without a body (fal's cancel). */
  put(url: string): Promise<FalOutcome> {
    return this.send(url, 'PUT', undefined);
  }

  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private trace(headers: Record<string, string>): Record<string, string> {
    return this.propagate ? this.propagate(headers) : headers;
  }

  private async send(url: string, method: 'GET' | 'POST' | 'PUT', body: string | undefined): Promise<FalOutcome> {
    let text: string;
    let status: number;
    try {
      // Queue calls are a few per job per poll interval, so the per-call timer of
      // AbortSignal.timeout is not worth optimising away here.
      const response = await request(url, {
        method,
        dispatcher: this.dispatcher,
        headers: this.trace(body === undefined ? this.getHeaders : this.postHeaders),
        body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = response.statusCode;
      text = await readText(response.body, MAX_BODY_BYTES);
    } catch (error) {
      return { kind: 'unreachable', error };
    }
    if (status < 200 || status >= 300) return { kind: 'http-error', status, text: text.slice(0, 1024) };
    try {
      return { kind: 'ok', status, json: JSON.parse(text) as unknown };
    } catch (error) {
      return { kind: 'unreachable', error };
    }
  }
}
