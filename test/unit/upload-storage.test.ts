import { PassThrough } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type { Request } from 'express';
import { copyOnArrivalStorage } from '../../src/rest/upload-storage';

const MAX_FILE = 1024 * 1024;

/** Feeds `data` to the storage in chunks of the given sizes, as busboy would; answers what it kept. */
function store(req: Request, data: Buffer, chunkSizes: number[] = [65536]): Promise<{ buffer: Buffer; size: number }> {
  const storage = copyOnArrivalStorage(MAX_FILE);
  const stream = new PassThrough();
  const kept = new Promise<{ buffer: Buffer; size: number }>((resolve, reject) =>
    storage._handleFile(req, { stream } as unknown as Express.Multer.File, (err, info) =>
      err ? reject(err) : resolve(info as { buffer: Buffer; size: number }),
    ),
  );
  for (let at = 0, i = 0; at < data.length; i++) {
    const n = chunkSizes[i % chunkSizes.length];
    stream.write(data.subarray(at, at + n));
    at += n;
  }
  stream.end();
  return kept;
}

const request = (contentLength?: number) => ({ headers: contentLength === undefined ? {} : { 'content-length': String(contentLength) } }) as unknown as Request;

test.each([
  ['a declared length a little above the file', 300_000 + 400],
  ['a declared length exactly the file', 300_000],
  ['no declared length', undefined],
  ['a declared length below the file (a lying client)', 1000],
  ['a declared length past the per-file cap', 50 * MAX_FILE],
])('keeps the file byte for byte with %s', async (_what, contentLength) => {
  const data = randomBytes(300_000);
  const kept = await store(request(contentLength), data, [1, 65536, 7, 12_345]);
  expect(kept.size).toBe(data.length);
  expect(kept.buffer.length).toBe(data.length);
  expect(kept.buffer.equals(data)).toBe(true);
});

test("a request's later file has room for what is left, and a small file keeps no more memory than its bytes", async () => {
  const req = request(400_000);
  const first = randomBytes(350_000);
  const second = randomBytes(1_000);
  const keptFirst = await store(req, first);
  // 350,000 of the 400,000 declared bytes were the first file's: the second's room is 50,000,
  // more than twice its size, so it is copied into a buffer of its own size.
  const keptSecond = await store(req, second);
  expect(keptFirst.buffer.equals(first)).toBe(true);
  expect(keptSecond.buffer.equals(second)).toBe(true);
  expect(keptSecond.buffer.buffer.byteLength).toBeLessThan(50_000);
  // The big file was copied in as it came, into the one buffer sized for it.
  expect(keptFirst.buffer.buffer.byteLength).toBe(400_000);
});
