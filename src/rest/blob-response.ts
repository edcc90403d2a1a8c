/**
 * Stored media streamed to a client: never read whole into memory, with Range support (one
 * range, a 206) so a browser can seek a video, the content type from an allow-list, nosniff.
 * The caller has checked the right to it (a media URL's token, or the job's owner) and says how
 * the bytes may be cached (a refusal of its Range is not).
 */
import { pipeline, type Readable } from 'node:stream';
import type { Request, Response } from 'express';
import type { BlobHandle } from '../domain/ports/blob-store';
import { invalidRequest } from '../domain/errors/domain-error';
import { asWritten } from '../domain/errors/field-path';
import { errorBody } from '../infra/http/error-body';
import { sendJson } from './json-response';

/** What stored media may be served as; anything else goes out as bytes a browser will not render. */
const SERVABLE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'video/mp4']);

/**
 * `bytes=a-b`, `bytes=a-` or `bytes=-n` (one range; browsers seeking a video send the first two).
 * Answers the inclusive range, 'unsatisfiable', or null for no (or an unusable) Range header,
 * which RFC 9110 says to ignore (a 200 with the whole file): several ranges, another unit, or a
 * last position before the first (`bytes=5-1`). A last position past the end is the end, however
 * many digits it has (`bytes=0-99999999999999999999` is the whole file, as a 206).
 */
export function parseByteRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  // Past 15 digits a position is beyond any file we store: Infinity compares as it should.
  const position = (digits: string) => (digits.length > 15 ? Infinity : Number(digits));
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = position(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = position(m[1]);
    const last = m[2] === '' ? Infinity : position(m[2]);
    if (last < start) return null;
    end = Math.min(last, size - 1);
  }
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}

/**
 * A source that fails cuts the response (its length was promised); a client that goes away
 * destroys the source, which gives back its file or its bucket connection at once.
 */
function stream(res: Response, source: Readable): void {
  pipeline(source, res, () => undefined);
}

export function sendBlob(req: Request, res: Response, found: { blob: BlobHandle; contentType: string }, cacheControl: string): void {
  const { blob } = found;
  const range = parseByteRange(req.headers.range, blob.size);
  if (range === 'unsatisfiable') {
    // RFC 9110 makes this a 416 with the size in Content-Range; the body is the OpenAI error
    // body every other refusal carries, not an empty one. 416 is HTTP's, not a domain outcome with
    // a type of its own in the status table, so it is written here with the shared body.
    const err = invalidRequest(
      `The Range '${String(req.headers.range).slice(0, 64)}' is outside the file's ${blob.size} bytes.`,
      [asWritten('Range')],
      'range_not_satisfiable',
    );
    sendJson(res, 416, { 'Content-Range': `bytes */${blob.size}`, 'Accept-Ranges': 'bytes' }, errorBody(err));
    return;
  }
  res.setHeader('Content-Type', SERVABLE_TYPES.has(found.contentType) ? found.contentType : 'application/octet-stream');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', cacheControl);
  res.setHeader('Accept-Ranges', 'bytes');
  if (range) {
    res.status(206).setHeader('Content-Range', `bytes ${range.start}-${range.end}/${blob.size}`);
    res.setHeader('Content-Length', String(range.end - range.start + 1));
    stream(res, blob.stream(range.start, range.end));
    return;
  }
  res.setHeader('Content-Length', String(blob.size));
  if (blob.size === 0) {
    res.end();
    return;
  }
  stream(res, blob.stream(0, blob.size - 1));
}
