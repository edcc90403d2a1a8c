/** A media library in memory: stored images by id, behind URLs of their own; it can be made to fill up after a number of saves. */
import { DomainError } from '../../../src/domain/errors/domain-error';
import { Readable } from 'node:stream';
import type { MediaLibrary } from '../../../src/domain/media/media-library';
import type { BlobHandle } from '../../../src/domain/ports/blob-store';

export interface StoredMedia {
  accountId: string;
  data: Buffer;
  contentType: string;
}

/** What the image and video services ask of the media library. */
type MediaLibraryPort = Pick<MediaLibrary, 'save' | 'discard' | 'openStored'>;

export class FakeMediaLibrary implements MediaLibraryPort {
  readonly stored = new Map<string, StoredMedia>();
  /** Saves that succeed before the store is full; unset: never full. */
  room: number | undefined;
  private saves = 0;

  async save(accountId: string, data: Buffer, contentType: string): Promise<{ id: string; url: string }> {
    if (this.room !== undefined && this.saves >= this.room) {
      throw new DomainError('service_unavailable', 'Media storage is unavailable.', { code: 'storage_unavailable', retryAfterSeconds: 30 });
    }
    const id = `med_${++this.saves}`;
    this.stored.set(id, { accountId, data, contentType });
    return { id, url: `https://media.test/media/${id}.png` };
  }

  async discard(ids: readonly string[]): Promise<void> {
    for (const id of ids) this.stored.delete(id);
  }

  async openStored(id: string): Promise<{ blob: BlobHandle; contentType: string } | null> {
    const found = this.stored.get(id);
    if (!found) return null;
    const { data } = found;
    return { blob: { size: data.length, stream: (start, end) => Readable.from([data.subarray(start, end + 1)]) }, contentType: found.contentType };
  }

  /** As the service takes it: MediaLibrary names the class, whose private state the fake has no need of. */
  asLibrary(): MediaLibrary {
    return this as unknown as MediaLibrary;
  }
}
