/**
 * Authenticated key records kept in memory, so a request authenticates without a database
 * round trip. Each entry holds the secret's hash (compared in constant time on every use) and
 * the principal. A change to a key anywhere is pushed over the TopicFeed and drops the entry
 * on every instance; while the feed is down nothing is served from memory (and the cache is
 * flushed when it goes down and when it comes back), so a revocation is never missed. Entries
 * also expire after a minute, a last line of defence.
 */
import type { KeyPrincipal } from './principal';
import type { TopicFeed } from '../ports/topic-feed';

const TTL_MS = 60_000;
const MAX_ENTRIES = 20_000;

interface Entry {
  principal: KeyPrincipal;
  /** The SHA-256 of the secret, as bytes. */
  secretHash: Buffer;
  expiresAt: number;
}

export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation: a load that started before one must not be cached. */
  private generation = 0;

  constructor(private readonly feed: TopicFeed) {
    feed.subscribe((keyId) => {
      this.generation++;
      this.entries.delete(keyId);
    });
    feed.onGap(() => this.flush());
  }

  get(keyId: string): Entry | undefined {
    if (!this.feed.live) return undefined;
    const entry = this.entries.get(keyId);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(keyId);
      return undefined;
    }
    return entry;
  }

  /** Marks the start of a load; pass the answer to `put`. */
  startLoad(): number {
    return this.generation;
  }

  put(keyId: string, loadedAt: number, principal: KeyPrincipal, secretHash: string): void {
    if (!this.feed.live || loadedAt !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(keyId, { principal, secretHash: Buffer.from(secretHash, 'hex'), expiresAt: Date.now() + TTL_MS });
  }

  /** Drops the key here and tells every other instance to. */
  async invalidate(keyId: string): Promise<void> {
    this.generation++;
    this.entries.delete(keyId);
    await this.feed.publish(keyId);
  }

  flush(): void {
    this.generation++;
    this.entries.clear();
  }
}
