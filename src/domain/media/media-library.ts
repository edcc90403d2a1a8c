import { createHmac, timingSafeEqual } from 'node:crypto';
import type { BlobHandle, BlobStore } from '../ports/blob-store';
import type { MediaRecords } from './media-records';
import { DATABASE_ANSWER_DEADLINE_MS, withinDeadline } from '../shared/deadline';
import { databaseTooSlow } from '../errors/domain-error';
import { newId, randomBase62 } from '../shared/ids';

const SECRET_NAME = 'media_url_secret';
const EXTENSIONS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp', 'video/mp4': 'mp4' };

/**
 * Stored media and their permanent URLs. A URL carries its own token, an HMAC of the media id
 * under a server secret kept in the database (so every instance, and every restart, agrees);
 * a plain GET with the right token returns the bytes, any other token answers 404.
 */
export class MediaLibrary {
  private constructor(
    private readonly records: MediaRecords,
    private readonly blobs: BlobStore,
    private readonly secret: string,
    private readonly baseUrl: () => string,
  ) {}

  static async open(records: MediaRecords, blobs: BlobStore, baseUrl: () => string): Promise<MediaLibrary> {
    return new MediaLibrary(records, blobs, await records.serverSecret(SECRET_NAME, randomBase62(48)), baseUrl);
  }

  private token(id: string): string {
    return createHmac('sha256', this.secret).update(id).digest('base64url').slice(0, 32);
  }

  urlFor(id: string, contentType: string): string {
    return `${this.baseUrl()}/media/${id}/${this.token(id)}.${EXTENSIONS[contentType] ?? 'bin'}`;
  }

  /** Stores the bytes, then records them (in `tx` when the record must commit with a job). */
  async save(accountId: string, data: Buffer, contentType: string): Promise<{ id: string; url: string }> {
    const id = newId('med', 24);
    await this.blobs.put(id, data);
    const insert = this.records.insert({ id, accountId, contentType, sizeBytes: data.length, storageKey: id });
    // On the request's way (an image answered by URL): a stalled database is a 503 within
    // seconds, nothing charged, instead of a request held for the whole stall. A row that lands
    // later names a blob nobody was given the URL of.
    await withinDeadline(insert, DATABASE_ANSWER_DEADLINE_MS, databaseTooSlow);
    return { id, url: this.urlFor(id, contentType) };
  }

  /**
   * Forgets media stored for an answer that was never given (one image of several could not be
   * stored: the others' URLs are never sent, so their files and rows would only fill the disk).
   */
  async discard(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.records.remove(ids);
    // Without their rows no URL serves them: a blob the store could not delete (its bucket away)
    // is only space, and the call that discarded it (a job's delete) has done what it was asked.
    await Promise.allSettled(ids.map((id) => this.blobs.remove(id)));
  }

  /**
   * The blob behind a media URL, opened for streaming; null for an unknown id or a wrong token
   * (indistinguishable).
   */
  async open(id: string, token: string): Promise<{ blob: BlobHandle; contentType: string } | null> {
    const expected = Buffer.from(this.token(id));
    const given = Buffer.from(token);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    return this.openStored(id);
  }

  /** The blob of a medium its caller already holds by other rights (its owner's job), opened for streaming; null when it is gone. */
  async openStored(id: string): Promise<{ blob: BlobHandle; contentType: string } | null> {
    const stored = await this.records.find(id);
    if (!stored) return null;
    const blob = await this.blobs.open(stored.storageKey);
    return blob ? { blob, contentType: stored.contentType } : null;
  }
}
