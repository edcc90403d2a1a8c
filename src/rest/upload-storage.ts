/**
 * Where multipart files are kept while a request is read: in memory, as multer's memory storage
 * keeps them, but copied as they arrive.
 *
 * multer's memory storage keeps a file's chunks and joins them with one `Buffer.concat` when the
 * file ends. For an 11 MB image that is one copy into fresh memory on the event loop, and fresh
 * memory is dear on a VM (page faults): 20–37 ms a file on the bench machine, and the longest
 * stall of the heavy-media phase (196 ms of copying when several uploads ended in one turn).
 * Here a file's buffer is sized once from what the request declares (its Content-Length, less
 * what earlier files of the request took, at most the per-file cap) and each chunk is copied in
 * when it arrives, so the same faults are spread over the upload's reads. A file whose buffer
 * turned out more than twice its size (a request of several files) is copied once into one of
 * its own size, so no request keeps more than its files' bytes; without a declared length, or
 * past it, chunks are kept and joined as multer's storage does.
 */
import type { Request } from 'express';
import type { StorageEngine } from 'multer';

/** Bytes the request's earlier files took, so a later file does not count them again. */
const takenByRequest = new WeakMap<Request, number>();

function declaredRoom(req: Request, maxFileBytes: number): number {
  const declared = Number(req.headers['content-length']);
  if (!Number.isSafeInteger(declared) || declared <= 0) return 0;
  return Math.max(0, Math.min(declared - (takenByRequest.get(req) ?? 0), maxFileBytes));
}

export function copyOnArrivalStorage(maxFileBytes: number): StorageEngine {
  return {
    _handleFile(req, file, cb) {
      const room = declaredRoom(req, maxFileBytes);
      let target: Buffer | null = room > 0 ? Buffer.allocUnsafe(room) : null;
      const chunks: Buffer[] = [];
      let size = 0;
      file.stream.on('data', (chunk: Buffer) => {
        if (target && size + chunk.length <= target.length) {
          chunk.copy(target, size);
        } else {
          // Past what was declared: keep the chunks, as multer's storage does.
          if (target) chunks.push(target.subarray(0, size));
          target = null;
          chunks.push(chunk);
        }
        size += chunk.length;
      });
      file.stream.on('end', () => {
        takenByRequest.set(req, (takenByRequest.get(req) ?? 0) + size);
        let buffer: Buffer;
        if (!target) buffer = Buffer.concat(chunks, size);
        else if (size * 2 < target.length) {
          // A buffer of its own (not a slice of node's shared pool, whose slab, 64 KB on Node 24,
          // the file would keep alive): the copy holds what the file holds.
          buffer = Buffer.allocUnsafeSlow(size);
          target.copy(buffer, 0, 0, size);
        } else buffer = target.subarray(0, size);
        cb(null, { buffer, size });
      });
    },
    _removeFile(_req, file, cb) {
      delete (file as Partial<Express.Multer.File>).buffer;
      cb(null);
    },
  };
}
