/**
 * The one outbound HTTP client: webhooks, fetching `image_url`/`video_url`, upstream media.
 *
 * Every URL it is given may come from a caller, so it is built to be safe to point anywhere:
 *  - the address check runs inside the connection itself (undici `connect.lookup`), on the very
 *    addresses the socket is about to use, so a name that resolved to a public address at
 *    acceptance and to 127.0.0.1 now (DNS rebinding) is still refused;
 *  - IP literals never reach `lookup` (Node connects to them directly), so they are checked
 *    before the request starts and again in the connector;
 *  - redirects are never followed (a 3xx comes back as it is: following one would be a second,
 *    unchecked request to wherever the server says);
 *  - total time (connect + headers + body) and body size are capped.
 *
 * Failures are OutboundRequestError with a machine-readable `reason`, never a DomainError: a
 * webhook delivery, a job and a provider call each turn a failed fetch into different outcomes.
 *
 * Node's global `fetch` ignores `http.Agent`, which is why this uses undici's Agent directly.
 */
import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector } from 'undici';
import { classifyAddress } from './address-policy';
import type { HostLookup } from './url-check';
import { drainBriefly } from './drain-body';

export type OutboundFailureReason =
  | 'invalid_url' // not an absolute URL, or it carries credentials
  | 'scheme' // not https (or not http/https when plain http is allowed)
  | 'forbidden_address' // the host is, or resolves to, an address we must not reach
  | 'timeout' // the total time cap elapsed
  | 'too_large' // the body is larger than the cap
  | 'status' // fetchMedia only: the response was not 2xx
  | 'network'; // anything else: DNS failure, refused connection, TLS, reset

export class OutboundRequestError extends Error {
  constructor(
    readonly reason: OutboundFailureReason,
    message: string,
    options: { cause?: unknown; status?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OutboundRequestError';
    this.status = options.status;
  }

  /** The HTTP status, for reason 'status'. */
  readonly status?: number;
}

export interface SafeHttpClientOptions {
  /** Allow loopback/private/... addresses and plain http (local development, tests). */
  allowLocal: boolean;
  defaultTimeoutMs: number;
  maxResponseBytes: number;
  userAgent?: string;
  /** Name resolution used at connect time; injected in tests. Defaults to the system resolver. */
  lookup?: HostLookup;
}

export interface SafeRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Total time for connect, headers and body. Defaults to the client's defaultTimeoutMs. */
  timeoutMs?: number;
  /** Body size cap. Defaults to the client's maxResponseBytes. */
  maxBytes?: number;
  /** Accept plain http (source media may be http; webhooks may not). */
  allowHttp?: boolean;
  /**
   * Only the status matters (webhooks): the body is read up to this many bytes, for at most
   * `discardWindowMs`, then dropped; its size and pace never make the request fail.
   */
  discardBodyAfter?: number;
  discardWindowMs?: number;
}

export interface SafeResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
}

function flatten(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name.toLowerCase()] = headerValue(value);
  }
  return flat;
}

const DEFAULT_USER_AGENT = 'svc-gateway/0.1';

const systemLookup: HostLookup = (host) => dns.lookup(host, { all: true, verbatim: true });

export class SafeHttpClient {
  private readonly allowLocal: boolean;
  private readonly defaultTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly userAgent: string;
  private readonly resolve: HostLookup;
  private readonly agent: Agent;

  constructor(options: SafeHttpClientOptions) {
    this.allowLocal = options.allowLocal;
    this.defaultTimeoutMs = options.defaultTimeoutMs;
    this.maxResponseBytes = options.maxResponseBytes;
    this.userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
    this.resolve = options.lookup ?? systemLookup;

    const connect = buildConnector({ lookup: this.guardedLookup, timeout: options.defaultTimeoutMs });
    this.agent = new Agent({
      // Wrapping the connector rather than passing options: literals skip `lookup`, so the
      // connector is the last place every connection passes through.
      connect: (opts, callback) => {
        const refusal = this.refusalFor(opts.hostname);
        if (refusal) {
          callback(refusal, null);
          return;
        }
        connect(opts, callback);
      },
    });
  }

  /**
   * Sends one request and reads the whole (capped) body. A 3xx is returned as it is; the caller
   * decides what a non-2xx means. Throws OutboundRequestError.
   */
  async request(rawUrl: string, options: SafeRequestOptions = {}): Promise<SafeResponse> {
    const url = this.checkUrl(rawUrl, options.allowHttp ?? false);
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    const maxBytes = options.maxBytes ?? this.maxResponseBytes;

    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (!Object.keys(headers).some((name) => name.toLowerCase() === 'user-agent')) {
      headers['user-agent'] = this.userAgent;
    }

    // One signal for the whole exchange: undici's own timeouts are per phase, and a server
    // dribbling one byte a second would never trip a per-phase idle timeout.
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new OutboundRequestError('timeout', `Request to ${url.host} timed out after ${timeoutMs} ms.`));
    }, timeoutMs);

    try {
      const response = await this.agent.request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: (options.method ?? 'GET').toUpperCase(),
        headers,
        body: options.body,
        signal: controller.signal,
      });

      if (options.discardBodyAfter !== undefined) {
        await drainBriefly(response.body, options.discardBodyAfter, options.discardWindowMs ?? 1_000);
        return { status: response.statusCode, headers: flatten(response.headers), body: Buffer.alloc(0) };
      }

      // Refuse early when the server announces a body over the cap, before reading any of it.
      const declared = Number(headerValue(response.headers['content-length']));
      if (Number.isFinite(declared) && declared > maxBytes) {
        response.body.destroy();
        throw tooLarge(url, maxBytes);
      }

      const chunks: Buffer[] = [];
      let received = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        received += chunk.length;
        if (received > maxBytes) {
          response.body.destroy();
          throw tooLarge(url, maxBytes);
        }
        chunks.push(chunk);
      }

      return { status: response.statusCode, headers: flatten(response.headers), body: Buffer.concat(chunks) };
    } catch (err) {
      if (timedOut) throw new OutboundRequestError('timeout', `Request to ${url.host} timed out after ${timeoutMs} ms.`, { cause: err });
      if (err instanceof OutboundRequestError) throw err;
      const cause = (err as { cause?: unknown }).cause;
      if (cause instanceof OutboundRequestError) throw cause;
      const detail = err instanceof Error ? err.message : String(err);
      throw new OutboundRequestError('network', `Request to ${url.host} failed: ${detail}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * GETs a media file (http allowed: source media URLs may be http). Requires a 2xx; the
   * content type is the response's media type, lower-case, without parameters
   * ('application/octet-stream' when absent).
   */
  async fetchMedia(url: string): Promise<{ data: Buffer; contentType: string }> {
    const response = await this.request(url, { method: 'GET', allowHttp: true });
    if (response.status < 200 || response.status > 299) {
      throw new OutboundRequestError('status', `Fetching ${safeHost(url)} answered HTTP ${response.status}.`, {
        status: response.status,
      });
    }
    const contentType = (response.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    return { data: response.body, contentType: contentType || 'application/octet-stream' };
  }

  /** Closes every pooled connection immediately. */
  async close(): Promise<void> {
    await this.agent.destroy();
  }

  private checkUrl(rawUrl: string, allowHttp: boolean): URL {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw new OutboundRequestError('invalid_url', 'The URL is not a valid absolute URL.');
    }
    if (url.username !== '' || url.password !== '') {
      throw new OutboundRequestError('invalid_url', 'The URL must not carry credentials.');
    }
    const httpAllowed = allowHttp || this.allowLocal;
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && httpAllowed)) {
      throw new OutboundRequestError('scheme', `The scheme ${url.protocol} is not allowed.`);
    }
    const refusal = this.refusalFor(url.hostname.replace(/^\[(.*)\]$/, '$1'));
    if (refusal) throw refusal;
    return url;
  }

  /** The error for an IP-literal host we must not reach; names are judged in `guardedLookup`. */
  private refusalFor(hostname: string): OutboundRequestError | null {
    if (this.allowLocal || !isIP(hostname)) return null;
    const category = classifyAddress(hostname);
    return category ? forbidden(hostname, category) : null;
  }

  /**
   * `lookup` for net/tls.connect. Resolves all addresses and refuses the connection if ANY is
   * forbidden (we do not know which one the socket will try first; with autoSelectFamily it may
   * try several). Answers in the shape Node asked for: an array when `options.all` is set
   * (Node 20's default happy-eyeballs path), otherwise one address and its family.
   */
  private readonly guardedLookup: LookupFunction = (hostname, options: LookupOptions, callback) => {
    this.resolve(hostname).then(
      (found) => {
        if (!this.allowLocal) {
          for (const { address } of found) {
            const category = classifyAddress(address);
            if (category) return callback(forbidden(hostname, category), '');
          }
        }
        const family = options.family === 4 || options.family === 'IPv4' ? 4 : options.family === 6 || options.family === 'IPv6' ? 6 : 0;
        const usable: LookupAddress[] = found.filter((a) => family === 0 || a.family === family);
        if (usable.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          err.code = 'ENOTFOUND';
          return callback(err, '');
        }
        if (options.all) return callback(null, usable);
        return callback(null, usable[0].address, usable[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

function forbidden(host: string, category: string): OutboundRequestError {
  return new OutboundRequestError('forbidden_address', `Refusing to connect to ${host}: ${category} address.`);
}

function tooLarge(url: URL, maxBytes: number): OutboundRequestError {
  return new OutboundRequestError('too_large', `The response from ${url.host} is larger than ${maxBytes} bytes.`);
}

function headerValue(value: string | string[] | undefined): string {
  return Array.isArray(value) ? value.join(', ') : (value ?? '');
}

function safeHost(raw: string): string {
  try {
    return new URL(raw).host;
  } catch {
    return 'the URL';
  }
}
