/**
 * What every JSON request body must be before a route sees it, on both REST lanes (Express's
 * parser and the JSON lane): sent as JSON, UTF-8, a JSON object, and no deeper than MAX_JSON_DEPTH.
 *
 * On the Express side each route that reads a body mounts `jsonBody` itself, after its path and
 * method matched: mounted in front of a whole door, it refused a text/plain or multipart POST to
 * a path with no route (`/v1/images/variations`) as a 400 about the Content-Type, where a JSON
 * POST got the unknown route's 404. A route that reads `req.body` without it would see undefined
 * and run on its defaults: test/e2e/malformed-bodies.test.ts sends each one a text/plain body.
 */
import { isUtf8 } from 'node:buffer';
import express, { type RequestHandler } from 'express';
import { DomainError } from '../domain/errors/domain-error';
import { bodyNotJson, bodyTooLarge, charsetNotUtf8, unsupportedContentType } from './error-middleware';
import { clientGone } from './abandoned-answer';
import { jsonDepthExceeds, MAX_JSON_DEPTH } from '../infra/http/json-depth';
import { jsonElementsExceed, MAX_JSON_ELEMENTS } from '../infra/http/json-elements';

export { jsonDepthExceeds, jsonElementsExceed, MAX_JSON_DEPTH };

/** JSON bodies above this answer 413; image edits (multipart) have their own limit. */
export const JSON_BODY_LIMIT = 1024 * 1024;
/** Chat and Responses bodies carry base64 images, audio and files (OpenAI takes 20 MB images). */
export const CHAT_BODY_LIMIT = 25 * 1024 * 1024;

export function bodyTooDeep(): DomainError {
  return new DomainError('invalid_request_error', `The request body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels.`, {
    code: 'body_too_deep',
  });
}

/** Refused before it is parsed (infra/http/json-elements.ts): parsing it could take the event loop for seconds. */
export function bodyTooComplex(): DomainError {
  return new DomainError(
    'invalid_request_error',
    `The request body holds more than ${MAX_JSON_ELEMENTS} JSON values; no request of this API needs that many.`,
    {
      code: 'body_too_complex',
    },
  );
}

/**
 * A body that is not UTF-8 (RFC 8259 requires it of JSON on the wire): decoding it anyway would
 * turn the bad bytes into U+FFFD and carry on with text the client never sent.
 */
export function bodyNotUtf8(): DomainError {
  return new DomainError('invalid_request_error', 'The request body is not valid UTF-8.', { code: 'invalid_encoding' });
}

/**
 * A body that is JSON but not an object (`[]`, `null`, `"x"`): no route of this API takes one.
 * Refused here, for every route alike and in one message, rather than by each route's schema in
 * its own words (zod's "expected object, received array").
 */
export function bodyNotObject(): DomainError {
  return new DomainError('invalid_request_error', 'The request body must be a JSON object.');
}

/** True for a parsed body a route can take: a JSON object. */
export function isJsonObject(body: unknown): boolean {
  return body !== null && typeof body === 'object' && !Array.isArray(body);
}

/** The charset parameter of a Content-Type, quoted or not. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/** A POST, PUT or PATCH that carries bytes (a GET's or DELETE's body is never read). */
function sendsBody(req: { method: string; headers: { 'content-length'?: string; 'transfer-encoding'?: string } }): boolean {
  if (req.method !== 'POST' && req.method !== 'PUT' && req.method !== 'PATCH') return false;
  const { 'content-length': length, 'transfer-encoding': chunked } = req.headers;
  return chunked !== undefined || (length !== undefined && length !== '0');
}

/**
 * express.json with the checks around it (Content-Type, UTF-8, depth). A body sent under another
 * Content-Type (or none) is a 400 saying how to send it: skipped by the parser, it would leave the
 * route running on its defaults (`{"mode":"test"}` sent as text/plain would create a live key).
 */
export function jsonBody(limit: number = JSON_BODY_LIMIT): RequestHandler {
  // body-parser reads the bytes (up to the limit, inflating a Content-Encoding); parseJsonBody,
  // the JSON lane's reading too, decides what they are.
  const read = express.raw({ type: () => true, limit });
  return (req, res, next) => {
    // body-parser skips a request whose socket has closed and leaves `req.body` undefined: the
    // route would run (and charge) on its defaults for a client that left while it waited (a
    // stalled database during authentication). Nothing is run for it.
    if (res.destroyed || req.socket?.destroyed) return next(clientGone());
    if (sendsBody(req) && !req.is('application/json')) {
      return next(unsupportedContentType('JSON, sent with Content-Type: application/json'));
    }
    const charset = CHARSET.exec(req.headers['content-type'] ?? '')?.[1];
    if (charset !== undefined && charset.toLowerCase() !== 'utf-8') return next(charsetNotUtf8());
    // A declared Content-Length over the limit is refused before a byte is read, with
    // `Connection: close` (the rest is never read), as the JSON lane does: body-parser read it first.
    if (Number(req.headers['content-length']) > limit) {
      res.setHeader('Connection', 'close');
      return next(bodyTooLarge());
    }
    read(req, res, (err?: unknown) => {
      if (err) return next(err);
      try {
        // undefined: no body was sent (the route reads its defaults).
        req.body = Buffer.isBuffer(req.body) ? parseJsonBody(req.body) : undefined;
      } catch (refusal) {
        return next(refusal);
      }
      next();
    });
  };
}

/**
 * The one reading of a JSON body's bytes, for both lanes: UTF-8, not too many values, a leading
 * BOM ignored, a JSON object no deeper than MAX_JSON_DEPTH. An empty body is undefined (the route
 * reads its defaults).
 */
export function parseJsonBody(raw: Buffer): Record<string, unknown> | undefined {
  if (!isUtf8(raw)) throw bodyNotUtf8();
  if (jsonElementsExceed(raw)) throw bodyTooComplex();
  let text = raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.length === 0) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw bodyNotJson();
  }
  if (!isJsonObject(body)) throw bodyNotObject();
  if (jsonDepthExceeds(body)) throw bodyTooDeep();
  return body as Record<string, unknown>;
}
