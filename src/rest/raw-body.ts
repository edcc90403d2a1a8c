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

/** A multipart body without its boundary, which clients pick at random for every attempt. */
export function withoutBoundary(body: Buffer, contentType: string | undefined): Buffer {
  const boundary = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const b = boundary?.[1] ?? boundary?.[2];
  return b ? Buffer.from(body.toString('latin1').split(b).join(''), 'latin1') : body;
}
