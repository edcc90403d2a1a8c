/**
 * The whole-body cap of a multipart upload, enforced twice: from Content-Length before a byte is
 * read, and while streaming (a chunked body, or one that lies about its length), counted as
 * the bytes arrive so that no more than the cap is ever parsed. multer's own limits are per
 * file, per field and per part count; this one bounds their sum.
 */
import type { RequestHandler } from 'express';
import type { IncomingMessage } from 'node:http';
import type { Writable } from 'node:stream';
import { bodyTooLarge } from './error-middleware';

/** Every multipart body (image edits): every image, the mask and the fields together. */
export const MAX_MULTIPART_BODY_BYTES = 50 * 1024 * 1024;

/** After the cap is passed, how long the rest of the body is read and dropped before the socket is cut. */
const DRAIN_GRACE_MS = 5_000;

/** A declared Content-Length over the cap is refused at once; the connection is not reused. */
export function declaredSizeCap(maxBytes: number): RequestHandler {
  return (req, res, next) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      res.setHeader('Connection', 'close');
      return next(bodyTooLarge(maxBytes));
    }
    next();
  };
}

/**
 * multer's `streamHandler`: feeds the request to busboy and counts. Past the cap busboy is
 * destroyed with a 413 (multer then stops parsing, drops what it kept and answers once the
 * client has stopped sending); a client that keeps sending has its connection cut after
 * DRAIN_GRACE_MS.
 */
export function cappedStreamHandler(maxBytes: number) {
  return (req: IncomingMessage, busboy: Writable): void => {
    let seen = 0;
    const count = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen <= maxBytes) return;
      req.off('data', count);
      const res = (req as IncomingMessage & { res?: { setHeader(n: string, v: string): void; headersSent: boolean } }).res;
      if (res && !res.headersSent) res.setHeader('Connection', 'close');
      busboy.destroy(bodyTooLarge(maxBytes));
      const cut = setTimeout(() => req.destroy(), DRAIN_GRACE_MS);
      cut.unref();
      req.once('end', () => clearTimeout(cut)).once('close', () => clearTimeout(cut));
    };
    req.on('data', count);
    req.pipe(busboy);
  };
}
