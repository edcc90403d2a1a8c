import { createReadStream } from 'node:fs';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobHandle, BlobStore } from '../../domain/ports/blob-store';
import { storageUnavailable } from './storage-unavailable';

/** Media on disk under `<DATA_DIR>/media`, fanned out by a prefix; writes are atomic (tmp + rename). */
export class DiskBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private path(key: string): { dir: string; file: string } {
    if (!/^[A-Za-z0-9_]+$/.test(key)) throw new Error('invalid blob key');
    const dir = join(this.root, key.slice(-2));
    return { dir, file: join(dir, key) };
  }

  async put(key: string, data: Buffer): Promise<void> {
    const { dir, file } = this.path(key);
    const tmp = `${file}.${process.pid}.tmp`;
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(tmp, data);
      await rename(tmp, file);
    } catch (err) {
      // A half-written file is not left behind (a full disk left one per failed image).
      await rm(tmp, { force: true }).catch(() => undefined);
      // Any system error writing our own media directory is the store's failure, not the
      // request's: full, out of inodes or quota, read-only, not permitted (a recursive mkdir on a
      // read-only disk says ENOENT, not EROFS, so no list of codes would catch them all).
      if (typeof (err as NodeJS.ErrnoException).code === 'string') throw storageUnavailable(err);
      throw err;
    }
  }

  async remove(key: string): Promise<void> {
    await rm(this.path(key).file, { force: true });
  }

  async open(key: string): Promise<BlobHandle | null> {
    const { file } = this.path(key);
    try {
      const { size } = await stat(file);
      return { size, stream: (start, end) => createReadStream(file, { start, end }) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }
}
