/**
 * Every active key's id and secret hash, in memory, so that a secret is refused without a
 * database read whether or not its key id exists. Without it, a well-formed secret whose id
 * exists in no row cost a read (and its refusal a millisecond more than a wrong secret of a
 * cached key): the time of a refusal told which key ids exist, and unknown ids were a cheap way
 * to load the database. With it, both refusals are a hash and a constant-time compare (against a
 * hash no secret has, for an unknown id). A right secret of a key not in the key cache is still
 * read from the database, for its record; the directory only ever refuses.
 *
 * Kept by the key-change feed: a key created, changed or revoked anywhere is announced, and its
 * row read again here (a batch per 100 ms). Until that read lands, and whenever the directory
 * could be stale (the feed down, or back and not yet reloaded), it answers "ask the database",
 * as it does for an id it cannot vouch for: it never refuses a key it has not seen the end of.
 * Memory: about 150 bytes a key (100,000 keys, 15 MB).
 */
import type { TopicFeed } from '../ports/topic-feed';
import type { KeyRepository } from './key-repository';
import type { Clock, TimerHandle } from '../ports/clock';
import { systemClock } from '../shared/system-clock';

const READ_BATCH_MS = 100;
const MAX_BATCH = 500;
const RELOAD_EVERY_MS = 5_000;

/** What the directory says of a key id: its secret hash, that no active key has it, or that it cannot tell. */
export type DirectoryAnswer = { kind: 'known'; secretHash: Buffer } | { kind: 'absent' } | { kind: 'ask' };

const ASK: DirectoryAnswer = { kind: 'ask' };
const ABSENT: DirectoryAnswer = { kind: 'absent' };

export class KeyDirectory {
  private hashes = new Map<string, Buffer>();
  private loaded = false;
  /** Bumped by every gap: a load that started before one is not trusted. */
  private generation = 0;
  /** Ids announced by the feed whose rows have not been read again yet. */
  private readonly pending = new Set<string>();
  private readonly due = new Set<string>();
  private timer: TimerHandle | undefined;
  private stopped = false;
  private reloading = false;
  private lastLoadTry = -Infinity;

  constructor(
    private readonly keys: Pick<KeyRepository, 'allActiveHashes' | 'activeHashesOf'>,
    private readonly feed: TopicFeed,
    private readonly clock: Clock = systemClock,
  ) {
    feed.subscribe((keyId) => this.announced(keyId));
    feed.onGap(() => {
      this.loaded = false;
      this.generation++;
      if (feed.live) void this.load().catch(() => undefined);
    });
  }

  /** Reads every active key; until it has, and after any gap until it has again, every answer is "ask". */
  async load(): Promise<void> {
    const generation = this.generation;
    const rows = await this.keys.allActiveHashes();
    if (generation !== this.generation || this.stopped) return;
    this.hashes = new Map(rows.map((r) => [r.id, Buffer.from(r.secretHash, 'hex')]));
    this.loaded = true;
  }

  /** True once every key change announced before the call has been heard here (see TopicFeed.caughtUp). */
  caughtUp(): Promise<boolean> {
    return this.feed.caughtUp();
  }

  lookup(keyId: string): DirectoryAnswer {
    if (!this.loaded) this.reloadNowAndThen();
    if (!this.loaded || !this.feed.live || this.pending.has(keyId)) return ASK;
    const secretHash = this.hashes.get(keyId);
    return secretHash ? { kind: 'known', secretHash } : ABSENT;
  }

  /** A key this instance just created: known here at once (the feed tells the others). */
  add(keyId: string, secretHashHex: string): void {
    this.hashes.set(keyId, Buffer.from(secretHashHex, 'hex'));
  }

  /** Announced ids whose rows are not read back yet. */
  get unsettled(): number {
    return this.pending.size;
  }

  stop(): void {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A load that failed (the database away at start or after a gap) is tried again by a later lookup, every few seconds at most. */
  private reloadNowAndThen(): void {
    const now = this.clock.monotonic();
    if (this.reloading || !this.feed.live || this.stopped || now - this.lastLoadTry < RELOAD_EVERY_MS) return;
    this.lastLoadTry = now;
    this.reloading = true;
    void this.load()
      .catch(() => undefined)
      .finally(() => (this.reloading = false));
  }

  private announced(keyId: string): void {
    this.pending.add(keyId);
    this.due.add(keyId);
    this.timer ??= this.clock.setTimeout(() => void this.readDue(), READ_BATCH_MS).unref();
  }

  private async readDue(): Promise<void> {
    this.timer = undefined;
    const ids = [...this.due].slice(0, MAX_BATCH);
    for (const id of ids) this.due.delete(id);
    if (this.due.size > 0) this.timer = this.clock.setTimeout(() => void this.readDue(), READ_BATCH_MS).unref();
    try {
      const rows = await this.keys.activeHashesOf(ids);
      const found = new Map(rows.map((r) => [r.id, r.secretHash]));
      for (const id of ids) {
        const hex = found.get(id);
        if (hex) this.hashes.set(id, Buffer.from(hex, 'hex'));
        else this.hashes.delete(id);
        // Announced again while this read ran: that read will settle it.
        if (!this.due.has(id)) this.pending.delete(id);
      }
    } catch {
      // The database is away: the ids stay "ask" and are read again with the next batch.
      for (const id of ids) this.due.add(id);
      if (!this.stopped) this.timer ??= this.clock.setTimeout(() => void this.readDue(), READ_BATCH_MS * 10).unref();
    }
  }
}
