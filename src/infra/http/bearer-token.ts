import type { IncomingMessage } from 'node:http';
import { invalidRequest } from '../../domain/errors/domain-error';
import { asWritten } from '../../domain/errors/field-path';

/** `Authorization: Bearer <token>` → the token; both doors (REST, GraphQL over HTTP and WebSocket) read credentials through this. */
export function bearerToken(header: string | undefined): string | null {
  if (!header || header.length > 10_000) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

/**
 * The request's one Authorization header. Node keeps the first of several in `req.headers`
 * while a proxy in front may keep the last (or join them): two would let the gateway and that
 * proxy see two identities in one request, so a second one is a 400, whatever either says.
 */
export function authorizationHeader(req: IncomingMessage): string | undefined {
  return singleHeader(req, 'Authorization');
}

/**
 * The value of a header that must be given once (`name` as the client reads it in the error),
 * or undefined; a second one is a 400 `duplicate_header` naming it. Node joins most repeated
 * headers with ", " (two Idempotency-Keys became one key, `k1, k2`) and keeps the first of some
 * (Authorization). Counted on `rawHeaders` (no `headersDistinct` object built per request on the hot path).
 */
export function singleHeader(req: IncomingMessage, name: string): string | undefined {
  const raw = req.rawHeaders;
  const lower = name.toLowerCase();
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const given = raw[i];
    if (given.length !== lower.length || given.toLowerCase() !== lower) continue;
    if (seen) throw invalidRequest(`The '${name}' header is given more than once; send exactly one.`, [asWritten(name)], 'duplicate_header');
    seen = true;
  }
  const value = req.headers[lower];
  return Array.isArray(value) ? value[0] : value;
}
