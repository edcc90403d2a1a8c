/**
 * Authenticated key records kept in memory, so a request authenticates without a database
 * round trip. Each entry holds the key's credentials (its secrets' hashes, compared in constant
 * time on every use, and the moments its replaced secret and the key itself stop) and the
 * principal, so an expiry or the end of a rotation's grace is decided here, on every instance. A
 * change to a key anywhere is pushed over the TopicFeed and drops the entry on every instance;
 * while the feed is down nothing is served from memory (and the cache is flushed when it goes
 * down and when it comes back), so a revocation is never missed. Entries also expire after a
 * minute, a last line of defence.
 *
 * A key in use is read again before then, in the background (`claimRefresh`), at a moment drawn
 * between half and three quarters of the minute: its requests never wait for the database after
 * its first, and the keys an instance met in the same seconds (all of them, after a restart) are
 * not all read again in the same second a minute later. They were: in the bench, the first round
 * of the streamed phase, which fell on that second, reread all 3,000 keys on the requests' path
 * and served half the calls of the next two rounds.
 */
import type { KeyPrincipal } from './principal';
import type { KeyCredentials } from './key-secrets';
import type { Clock } from '../ports/clock';
import type { TopicFeed } from '../ports/topic-feed';
import { systemClock } from '../shared/system-clock';

const TTL_MS = 60_000;
/** An entry is read again from this share of its life, plus up to REFRESH_SPREAD more (drawn per entry). */
const REFRESH_FROM = 0.5;
const REFRESH_SPREAD = 0.25;
const MAX_ENTRIES = 20_000;

export interface Entry {
  principal: KeyPrincipal;
  credentials: KeyCredentials;
  /** When this entry stops being served (not the key's own expiry, which is in `credentials`). */
  expiresAt: number;
  /** From then, the next use asks for the entry to be read again (once). */
  refreshAt: number;
  refreshing: boolean;
}

export class KeyCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by every invalidation: a load that started before one must not be cached. */
  private generation = 0;

  constructor(
    private readonly feed: TopicFeed,
    private readonly clock: Clock = systemClock,
    private readonly random: () => number = Math.random,
  ) {
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
    if (entry.expiresAt <= this.clock.now()) {
      this.entries.delete(keyId);
      return undefined;
    }
    return entry;
  }

  /**
   * Whether the caller should read this entry's key again now, in the background: true once
   * its refresh time has come, then not until the read is over (`refreshDone`) or has replaced it.
   */
  claimRefresh(entry: Entry): boolean {
    if (entry.refreshing || entry.refreshAt > this.clock.now()) return false;
    entry.refreshing = true;
    return true;
  }

  /** A background read is over (replaced or not): a read that failed may be tried again by a later use. */
  refreshDone(entry: Entry): void {
    entry.refreshing = false;
  }

  /** Drops the key here only: a background read found it revoked or gone. */
  drop(keyId: string): void {
    this.entries.delete(keyId);
  }

  /** Marks the start of a load; pass the answer to `put`. */
  startLoad(): number {
    return this.generation;
  }

  put(keyId: string, loadedAt: number, principal: KeyPrincipal, credentials: KeyCredentials): void {
    if (!this.feed.live || loadedAt !== this.generation) return;
    // Put again at the end of the Map's order (a key read again in the background is in use), so
    // that the first entry, the one evicted when the cache is full, is the longest unrefreshed.
    this.entries.delete(keyId);
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    const now = this.clock.now();
    const refreshAt = now + TTL_MS * (REFRESH_FROM + REFRESH_SPREAD * this.random());
    this.entries.set(keyId, { principal, credentials, expiresAt: now + TTL_MS, refreshAt, refreshing: false });
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
