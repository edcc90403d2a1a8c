import type { Request } from 'express';
import { Readable } from 'node:stream';
import { bodyTooLarge } from './error-middleware';

/**
 * Reads a request body that a later parser (multer) would otherwise read, and hands that parser
 * the same bytes: `req.pipe`/`req.unpipe` are redirected to a stream over the buffer. Used only
 * for a multipart request that carries an Idempotency-Key, whose bytes must be fingerprinted
 * before the handler runs.
 */
export async function readAndReplayBody(req: Request, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) throw bodyTooLarge();
    chunks.push(chunk as Buffer);
  }
  const body = Buffer.concat(chunks);
  const replay = Readable.from([body]);
  const r = req as unknown as { pipe: Readable['pipe']; unpipe: Readable['unpipe'] };
  r.pipe = ((dest: NodeJS.WritableStream, opts?: { end?: boolean }) => replay.pipe(dest, opts)) as Readable['pipe'];
  r.unpipe = (dest?: NodeJS.WritableStream) => {
    replay.unpipe(dest);
    return req;
  };
  return body;
}

function boundaryOf(contentType: string | undefined): string | undefined {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return boundary?.[1] ?? boundary?.[2];
}

/** A multipart body without its boundary, which clients pick at random for every attempt. */
export function withoutBoundary(body: Buffer, contentType: string | undefined): Buffer {
  const b = boundaryOf(contentType);
  return b ? Buffer.from(body.toString('latin1').split(b).join(''), 'latin1') : body;
}

/**
 * The value of the text part `name` (a plain field name: letters, digits, `_`) of a whole
 * multipart body (its first, as latin1), or undefined: for deciding about a request before multer
 * parses it. A part with a filename is a file, not a text field.
 */
export function multipartTextField(body: Buffer, contentType: string | undefined, name: string): string | undefined {
  const b = boundaryOf(contentType);
  if (!b) return undefined;
  const disposition = new RegExp(`^content-disposition:\\s*form-data;\\s*name="${name}"\\s*$`, 'im');
  for (const part of body.toString('latin1').split(`--${b}`)) {
    const headEnd = part.indexOf('\r\n\r\n');
    if (headEnd < 0 || !disposition.test(part.slice(0, headEnd))) continue;
    return part.slice(headEnd + 4).replace(/\r\n$/, '');
  }
  return undefined;
}
