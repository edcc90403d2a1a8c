/**
 * The hot path's own door. The billed JSON POSTs (`/v1/chat/completions`, `/v1/responses`) are
 * served here on node:http directly instead of through Express: in the bench profile the router,
 * body-parser, raw-body, type-is and Express's response helpers cost about a sixth of the
 * gateway's CPU per call. The lane does what the Express chain does for these requests (metrics,
 * the API key from the cache, the body read up to its limit and parsed strictly, one error
 * writer) and hands every request it does not cover unchanged to Express: another method or
 * path, a query string, an Idempotency-Key, a content type other than plain `application/json`,
 * or a Content-Encoding. Express keeps the same routes, so both ways answer alike.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { KeyAuthenticator } from '../domain/keys/key-authenticator';
import type { Logger } from '../infra/observability/logger';
import type { Metrics } from '../infra/observability/metrics';
import { IDEMPOTENCY_HEADER } from '../domain/idempotency/idempotency-service';
import { answerFailure, bodyTooLarge } from './error-middleware';
import { clientGone } from './abandoned-answer';
import { NO_STORE } from './http-app';
import { observeRequest } from './request-metrics';
import { parseJsonBody } from './json-body';
import { authenticateApiKey } from './auth';
import type { JsonPostHandler } from './routes/chat-routes';
import type { RequestLog } from '../domain/requests/request-log';
import { callLogOf, openCallLog } from './call-logs';

export interface JsonLaneRoute {
  /** The whole request target, e.g. `/v1/chat/completions`. */
  path: string;
  /** The largest body accepted, in bytes (413 above it). */
  limitBytes: number;
  handle: JsonPostHandler;
}

const PLAIN_JSON = /^application\/json\s*(?:;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const IDEMPOTENCY = IDEMPOTENCY_HEADER.toLowerCase();

export function withJsonLane(
  deps: { keys: KeyAuthenticator; metrics: Metrics; logger: Logger; requestLog: RequestLog },
  routes: JsonLaneRoute[],
  fallback: RequestListener,
): RequestListener {
  const byPath = new Map(routes.map((r) => [r.path, r]));
  return (req, res) => {
    const route = req.method === 'POST' ? byPath.get(req.url ?? '') : undefined;
    const h = req.headers;
    if (!route || h[IDEMPOTENCY] !== undefined || h['content-encoding'] !== undefined || !PLAIN_JSON.test(h['content-type'] ?? '')) {
      fallback(req, res);
      return;
    }
    observeRequest(deps.metrics, res, () => route.path);
    serve(deps, route, req, res).catch((err) => answerFailure(deps.logger, err, req, res));
  };
}

async function serve(deps: { keys: KeyAuthenticator; requestLog: RequestLog }, route: JsonLaneRoute, req: IncomingMessage, res: ServerResponse): Promise<void> {
  // As every /v1 answer on the Express side (http-app.ts, noStore).
  res.setHeader('Cache-Control', NO_STORE);
  // Authenticated before the body is read, as on the Express side: a stranger cannot make us read 25 MB.
  const key = await authenticateApiKey(deps.keys, req);
  openCallLog(deps.requestLog, key, req, res, route.path);
  const body = parseJsonBody(await readBody(req, res, route.limitBytes)) ?? {};
  // Where Express's parsers put it: what reads a request's body after its handler (the trace's end) finds it alike.
  (req as IncomingMessage & { body?: unknown }).body = body;
  callLogOf(res)?.requested(body);
  await route.handle(key, body, res);
}

/**
 * The body, up to `limit` bytes. Past it the answer is 413 with `Connection: close`, so the
 * rest of the upload is never read: the connection goes instead.
 */
function readBody(req: IncomingMessage, res: ServerResponse, limit: number): Promise<Buffer> {
  // A client that left while authentication waited: its close was emitted before these listeners.
  if (req.destroyed || res.destroyed) return Promise.reject(clientGone());
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    res.setHeader('Connection', 'close');
    return Promise.reject(bodyTooLarge());
  }
  // The whole declared body came with the headers, as a small request's does: take it as it is
  // buffered, without the stream's flowing mode and its 'end' (node:http marks the message
  // complete only on a later turn).
  if (declared > 0 && req.readableLength === declared) return Promise.resolve(req.read() as Buffer);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.off('end', onEnd);
        res.setHeader('Connection', 'close');
        reject(bodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    req.on('data', onData);
    req.on('end', onEnd);
    // A client that leaves mid-upload: nothing to answer (the response closes with the socket).
    req.on('error', reject);
  });
}
