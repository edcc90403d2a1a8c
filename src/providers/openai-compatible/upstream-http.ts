/**
 * The HTTP side of the OpenAI-compatible adapter: one keep-alive undici Agent per adapter,
 * headers computed once, and the three call shapes the adapter needs (JSON in / JSON out,
 * multipart in / JSON out, JSON in / SSE stream out). Every failure leaves here as a
 * DomainError, so the capability files above it only deal with well-formed answers.
 *
 * Timeouts: a JSON call has a total deadline of `timeoutMs`. A stream has no total deadline
 * (a long answer is legitimate); instead the headers must arrive within `timeoutMs` and the
 * body may never go quiet for longer than that (undici's headersTimeout/bodyTimeout).
 */
import { Agent, FormData, type Dispatcher } from 'undici';
import { CallTimedOut, collectedCall, type CollectedResponse } from '../shared/collected-call';
import { streamedCall, type StreamedResponse } from '../shared/streamed-call';
import { asUpstreamError, errorForStatus, type ErrorScrub } from '../shared/upstream-errors';
import type { Propagate } from '../shared/propagate';

/** Which model a call was for, so an upstream's error can name it the way the client does. */
export interface CallModel {
  upstreamModel: string;
  publicModel: string;
}

export interface UpstreamHttpOptions {
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
  dispatcher?: Dispatcher;
  /** Tracing on: each request carries the current span's traceparent. */
  propagate?: Propagate;
}

import { readText, type ResponseBody } from '../shared/read-text';
import type { CallSignal } from '../../domain/shared/call-signal';

export type { ResponseBody };

/** An upstream that answers with more than this is broken; refuse it rather than run out of memory. */
const MAX_RESPONSE_BYTES = 128 * 1024 * 1024;
/** Error bodies are only read far enough to recognise a content-policy refusal. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class UpstreamHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly baseUrl: string;
  /** The base URL split once, so a call hands undici an origin and a path instead of a URL to parse. */
  private readonly origin: string;
  private readonly basePath: string;
  private readonly timeoutMs: number;
  private readonly jsonHeaders: Record<string, string>;
  private readonly streamHeaders: Record<string, string>;
  private readonly authHeaders: Record<string, string>;
  private readonly multipartHeaders: Record<string, string>;
  private readonly multipartStreamHeaders: Record<string, string>;
  private readonly apiKey?: string;
  private readonly propagate?: Propagate;

  constructor(options: UpstreamHttpOptions) {
    this.propagate = options.propagate;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    const base = new URL(this.baseUrl);
    this.origin = base.origin;
    this.basePath = base.pathname.replace(/\/+$/, '') + base.search;
    this.timeoutMs = options.timeoutMs;
    this.apiKey = options.apiKey;
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher = options.dispatcher ?? new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 120_000 });
    // Built once: undici does not mutate header objects, so every request can share them.
    this.authHeaders = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
    this.jsonHeaders = { ...this.authHeaders, 'content-type': 'application/json', accept: 'application/json' };
    this.streamHeaders = { ...this.authHeaders, 'content-type': 'application/json', accept: 'text/event-stream' };
    this.multipartHeaders = { ...this.authHeaders, accept: 'application/json' };
    this.multipartStreamHeaders = { ...this.authHeaders, accept: 'text/event-stream' };
  }

  /**
   * JSON in, JSON out. With `model` given, an upstream 4xx that blames the request becomes a
   * client error carrying the upstream's (scrubbed) message; without it every failure is a 502.
   */
  postJson(path: string, payload: unknown, signal?: CallSignal, model?: CallModel): Promise<unknown> {
    return this.call(path, JSON.stringify(payload), this.jsonHeaders, signal, model);
  }

  private scrubFor(model: CallModel | undefined): ErrorScrub | undefined {
    if (!model) return undefined;
    const secrets = [this.baseUrl, new URL(this.baseUrl).host];
    if (this.apiKey) secrets.push(this.apiKey);
    return { secrets, model: { upstream: model.upstreamModel, public: model.publicModel } };
  }

  /** A FormData body: undici sets its multipart Content-Type (with the boundary) and length. */
  postMultipart(path: string, form: FormData, signal?: CallSignal): Promise<unknown> {
    return this.call(path, form, this.multipartHeaders, signal);
  }

  /**
   * Opens a streaming POST (a JSON payload, or a FormData sent as multipart) and returns the body
   * once a 2xx status arrived. Failing before that point throws (the caller has sent nothing to
   * its client yet, so nothing is billed).
   */
  async openStream(path: string, payload: unknown, signal?: CallSignal, model?: CallModel): Promise<{ body: ResponseBody; contentType: string }> {
    const multipart = payload instanceof FormData;
    let response: StreamedResponse;
    try {
      response = await streamedCall(
        this.dispatcher,
        {
          origin: this.origin,
          path: this.basePath + path,
          method: 'POST',
          headers: this.withTrace(multipart ? this.multipartStreamHeaders : this.streamHeaders),
          body: multipart ? payload : JSON.stringify(payload),
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
        },
        signal,
      );
    } catch (err) {
      throw asUpstreamError(err, isUndiciTimeout(err));
    }
    if (response.status < 200 || response.status >= 300) {
      const text = await readText(response.body, MAX_ERROR_BODY_BYTES, true).catch(() => '');
      const retryAfter = response.headers['retry-after'];
      throw errorForStatus(response.status, text, this.scrubFor(model), Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
    }
    return { body: response.body, contentType: String(response.headers['content-type'] ?? '') };
  }

  /** Reads a whole (2xx) body as JSON; for streams that turn out not to be streams. */
  async readJson(body: ResponseBody): Promise<unknown> {
    try {
      return JSON.parse(await readText(body, MAX_RESPONSE_BYTES, false)) as unknown;
    } catch (err) {
      throw asUpstreamError(err, isUndiciTimeout(err));
    }
  }

  /** Closes the Agent this adapter created (a dispatcher passed in belongs to its owner). */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  private withTrace(headers: Record<string, string>): Record<string, string> {
    return this.propagate ? this.propagate(headers) : headers;
  }

  private async call(
    path: string,
    body: string | Buffer | FormData,
    headers: Record<string, string>,
    signal: CallSignal | undefined,
    model?: CallModel,
  ): Promise<unknown> {
    let response: CollectedResponse;
    try {
      response = await collectedCall(
        this.dispatcher,
        { origin: this.origin, path: this.basePath + path, method: 'POST', headers: this.withTrace(headers), body },
        { limitBytes: MAX_RESPONSE_BYTES, errorLimitBytes: MAX_ERROR_BODY_BYTES, timeoutMs: this.timeoutMs, signal },
      );
    } catch (err) {
      throw asUpstreamError(err, err instanceof CallTimedOut);
    }
    if (response.status < 200 || response.status >= 300) throw errorForStatus(response.status, response.text, this.scrubFor(model), response.retryAfter);
    try {
      return JSON.parse(response.text) as unknown;
    } catch (err) {
      throw asUpstreamError(err);
    }
  }
}

/** undici's own headers/body timeouts (used by streams) carry these codes. */
export function isUndiciTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
}
