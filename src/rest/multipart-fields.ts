/**
 * The multipart door's own checks, around multer: the body must be multipart at all, and each
 * text field must arrive once, as UTF-8 text, before the domain's schema reads the fields.
 */
import type { RequestHandler } from 'express';
import { invalidField } from '../domain/errors/domain-error';
import { unsupportedContentType } from './error-middleware';

/**
 * A multipart route answers any other body (JSON, text, none) with the same 400 the JSON routes
 * give a wrong Content-Type: without it multer skipped the body and the route ran on no fields,
 * answering "Invalid 'prompt': is required" to a client that had sent one as JSON.
 */
export const requireMultipart: RequestHandler = (req, _res, next) => {
  if (req.is('multipart/form-data') === 'multipart/form-data') return next();
  next(unsupportedContentType('multipart/form-data (the images as file parts, the other fields as text parts), sent with Content-Type: multipart/form-data'));
};

/**
 * busboy decodes a text part as UTF-8 and turns bytes that are not UTF-8 (`x\xff\xfey`, CESU-8
 * surrogates) into U+FFFD without a word, so a field holding U+FFFD is refused as the JSON door
 * refuses a body that is not UTF-8 (`invalid_encoding`). The raw bytes are not kept, so a client
 * that sends U+FFFD itself gets the same 400: text carrying it has lost something already.
 */
const REPLACEMENT = '\uFFFD';

/**
 * multer's `req.body` as the domain takes it. A field given twice arrives as an array (and
 * `n[]=1` as one too): the schema would say "expected string, received array"; it is a 400 that
 * says the field was given more than once, as a repeated query parameter is. Other shapes
 * (`a[b]=1`) are left to the schema, which refuses them as unknown or mistyped fields.
 */
export function multipartTextFields(body: unknown): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [name, value] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    const param = name.slice(0, 64);
    if (Array.isArray(value)) throw invalidField([param], 'given more than once; give it once, as plain text.');
    if (typeof value === 'string' && value.includes(REPLACEMENT)) throw invalidField([param], 'the text is not valid UTF-8.', 'invalid_encoding');
    fields[name] = value;
  }
  return fields;
}
