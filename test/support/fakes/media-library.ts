/** A media library in memory: stored images by id, behind URLs of their own; it can be made to fill up after a number of saves. */
import { DomainError } from '../../../src/domain/errors/domain-error';
import type { MediaLibrary } from '../../../src/domain/media/media-library';

export interface StoredMedia {
  accountId: string;
  data: Buffer;
  contentType: string;
}

/** What the image service asks of the media library. */
type MediaLibraryPort = Pick<MediaLibrary, 'save' | 'discard'>;

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

  /** As the service takes it: MediaLibrary names the class, whose private state the fake has no need of. */
  asLibrary(): MediaLibrary {
    return this as unknown as MediaLibrary;
  }
}
