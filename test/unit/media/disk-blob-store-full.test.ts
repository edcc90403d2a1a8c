/**
 * A disk that cannot take a media file (full, out of quota, read-only) is the store's failure: a
 * 503 storage_unavailable with Retry-After, not an internal error, and no half-written file left.
 * The failing rename stands in for a full disk (the tmp file is written, the step after fails).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { DiskBlobStore } from '../../../src/infra/media/disk-blob-store';
import { DomainError } from '../../../src/domain/errors/domain-error';

// The store's own `rename`, failing once when told to: set on node:fs/promises itself and synced
// into its ES-module bindings, so the store sees it however it imports the function.
const fsp = createRequire(__filename)('node:fs/promises') as typeof import('node:fs/promises');
const realRename = fsp.rename;
const failNext: { code?: string } = {};
beforeAll(() => {
  fsp.rename = async (from, to) => {
    const code = failNext.code;
    failNext.code = undefined;
    if (code) throw Object.assign(new Error(`${code}: no space left on device`), { code });
    return realRename(from, to);
  };
  syncBuiltinESMExports();
});
afterAll(() => {
  fsp.rename = realRename;
  syncBuiltinESMExports();
});

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'blobs-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);

test.each(['ENOSPC', 'EDQUOT', 'EROFS', 'ENOENT', 'EIO'])('%s: 503 storage_unavailable with Retry-After, and no tmp file left', async (code) => {
  const store = new DiskBlobStore(root);
  failNext.code = code;
  const err = await store.put('med_abc12', Buffer.alloc(1024, 1)).catch((e) => e);
  expect(err).toBeInstanceOf(DomainError);
  expect(err).toMatchObject({ type: 'service_unavailable', code: 'storage_unavailable', status: 503 });
  expect(err.retryAfterSeconds).toBeGreaterThan(0);
  expect(filesUnder(root)).toEqual([]);
  // The next write, with room again, lands.
  await store.put('med_abc12', Buffer.alloc(1024, 1));
  expect(filesUnder(root)).toEqual(['med_abc12']);
});

// A recursive mkdir on a read-only disk says ENOENT, not EROFS, so no list of codes would catch
// them all: any system error writing the store's own directory is the store's failure.
test('a failure that is no system error (a bug) stays what it is, and leaves no tmp file either', async () => {
  const store = new DiskBlobStore(root);
  const err = await store.put('bad key!', Buffer.alloc(10)).catch((e) => e);
  expect(err).not.toBeInstanceOf(DomainError);
  expect(filesUnder(root)).toEqual([]);
});
