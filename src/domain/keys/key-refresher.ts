/**
 * Reads cached keys again in the background before their entries expire (key-cache.ts), many
 * keys to a statement: the keys whose refresh came due within REFRESH_BATCH_MS are read together
 * (up to MAX_BATCH a statement). Read one by one, 3,000 keys in use cost 3,000 queries a minute
 * through the ORM's connection, about a millisecond of the event loop each: in the bench, a fifth
 * of the gateway's thread for the quarter minute they came due in.
 *
 * A key the read does not find active (revoked or deleted without the news reaching this
 * instance's feed) is dropped from the cache; a read that fails leaves the entries serving
 * until they expire, and their next use tries again.
 */
import type { Clock, TimerHandle } from '../ports/clock';
import type { Entry as CachedKey, KeyCache } from './key-cache';
import { principalOf } from './key-record';
import type { KeyRepository } from './key-repository';
import { credentialsOf } from './key-secrets';

const REFRESH_BATCH_MS = 100;
const MAX_BATCH = 500;

export class KeyRefresher {
  private readonly due = new Map<string, CachedKey>();
  private timer: TimerHandle | undefined;

  constructor(
    private readonly keys: Pick<KeyRepository, 'findActiveKeys'>,
    private readonly cache: KeyCache,
    private readonly clock: Clock,
  ) {}

  /** Called on each use of a cached key: queues it for a read when its entry says it is time. */
  used(keyId: string, entry: CachedKey): void {
    if (!this.cache.claimRefresh(entry)) return;
    this.due.set(keyId, entry);
    this.schedule();
  }

  private schedule(): void {
    this.timer ??= this.clock.setTimeout(() => void this.readDue(), REFRESH_BATCH_MS).unref();
  }

  private async readDue(): Promise<void> {
    this.timer = undefined;
    const batch = [...this.due].slice(0, MAX_BATCH);
    for (const [keyId] of batch) this.due.delete(keyId);
    if (this.due.size > 0) this.schedule();
    const ids = batch.map(([keyId]) => keyId);
    try {
      const loadedAt = this.cache.startLoad();
      const rows = await this.keys.findActiveKeys(ids);
      const found = new Map(rows.map((row) => [row.id, row]));
      for (const keyId of ids) {
        const row = found.get(keyId);
        if (row) this.cache.put(keyId, loadedAt, principalOf(row), credentialsOf(row, row.expiresAt));
        else this.cache.drop(keyId);
      }
    } catch {
      // The database is away: the entries serve until they expire; their next use tries again.
    } finally {
      for (const [, entry] of batch) this.cache.refreshDone(entry);
    }
  }
}
