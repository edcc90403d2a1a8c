import { createReadStream } from 'node:fs';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobHandle, BlobStore } from '../../domain/ports/blob-store';

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
    await mkdir(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    await writeFile(tmp, data);
    await rename(tmp, file);
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
