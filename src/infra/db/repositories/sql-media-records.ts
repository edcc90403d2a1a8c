import type { Database } from '../../../domain/ports/database';
import type { MediaRecords, NewMedia, StoredMedia } from '../../../domain/media/media-records';

/** Media records on `media_objects`; the server secret on `server_secrets`. */
export class SqlMediaRecords implements MediaRecords {
  constructor(private readonly db: Database) {}

  async serverSecret(name: string, candidate: string): Promise<string> {
    await this.db.run(`insert into server_secrets (name, value) values (?, ?) on conflict do nothing`, [name, candidate]);
    const row = await this.db.one<{ value: string }>(`select value from server_secrets where name = ?`, [name]);
    return row!.value;
  }

  async insert(m: NewMedia): Promise<void> {
    await this.db.run(`insert into media_objects (id, account_id, content_type, size_bytes, storage_key) values (?, ?, ?, ?, ?)`, [
      m.id,
      m.accountId,
      m.contentType,
      m.sizeBytes,
      m.storageKey,
    ]);
  }

  async remove(ids: readonly string[]): Promise<void> {
    await this.db.run(`delete from media_objects where id in (${ids.map(() => '?').join(', ')})`, [...ids]);
  }

  async find(id: string): Promise<StoredMedia | undefined> {
    const row = await this.db.one<{ content_type: string; storage_key: string }>(`select content_type, storage_key from media_objects where id = ?`, [id]);
    return row ? { contentType: row.content_type, storageKey: row.storage_key } : undefined;
  }
}
