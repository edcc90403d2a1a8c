import type { IncomingMessage } from 'node:http';
import { invalidRequest } from '../../domain/errors/domain-error';

/** `Authorization: Bearer <token>` → the token; both doors (REST, GraphQL over HTTP and WebSocket) read credentials through this. */
export function bearerToken(header: string | undefined): string | null {
  if (!header || header.length > 10_000) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/**
 * The request's one Authorization header. Node keeps the first of several in `req.headers`
 * while a proxy in front may keep the last (or join them): two would let the gateway and that
 * proxy see two identities in one request, so a second one is a 400, whatever either says.
 * Counted on `rawHeaders` (no `headersDistinct` object built per request on the hot path).
 */
export function authorizationHeader(req: IncomingMessage): string | undefined {
  const raw = req.rawHeaders;
  let seen = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length !== 13 || name.toLowerCase() !== 'authorization') continue;
    if (seen) throw invalidRequest("The 'Authorization' header is given more than once; send exactly one.", 'Authorization', 'duplicate_header');
    seen = true;
  }
  return req.headers.authorization;
}
