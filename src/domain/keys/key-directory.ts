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
 * A rotated key's replaced secret is held beside it while its grace lasts, so that secret is
 * taken until then and refused from memory after.
 * Memory: about 150 bytes a key (100,000 keys, 15 MB), and as much again for a key in its grace.
 */
import type { TopicFeed } from '../ports/topic-feed';
import type { KeyRepository } from './key-repository';
import type { KeyCredentials, StoredSecrets } from './key-secrets';
import type { Clock, TimerHandle } from '../ports/clock';
import { systemClock } from '../shared/system-clock';

const READ_BATCH_MS = 100;
const MAX_BATCH = 500;
const RELOAD_EVERY_MS = 5_000;

/**
 * What the directory says of a key id: its secrets (its expiry is not the directory's to know),
 * that no active key has it, or that it cannot tell.
 */
export type DirectoryAnswer = { kind: 'known'; credentials: KeyCredentials } | { kind: 'absent' } | { kind: 'ask' };

/** A replaced secret's hash and the end of its grace (epoch ms). */
interface Replaced {
  hash: Buffer;
  until: number;
}

const ASK: DirectoryAnswer = { kind: 'ask' };
const ABSENT: DirectoryAnswer = { kind: 'absent' };

export class KeyDirectory {
  private hashes = new Map<string, Buffer>();
  /** The keys whose replaced secret was in its grace when last read. */
  private replaced = new Map<string, Replaced>();
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
    this.replaced = new Map();
    for (const row of rows) this.setReplaced(row.id, row);
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
    if (!secretHash) return ABSENT;
    const replaced = this.replaced.get(keyId);
    const credentials = { secretHash, previousSecretHash: replaced?.hash ?? null, previousSecretUntil: replaced?.until ?? 0, expiresAt: null };
    return { kind: 'known', credentials };
  }

  /** A key this instance just created or rotated: known here at once (the feed tells the others). */
  set(keyId: string, secrets: StoredSecrets): void {
    this.hashes.set(keyId, Buffer.from(secrets.secretHash, 'hex'));
    this.setReplaced(keyId, secrets);
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

  /** Holds the key's replaced secret while its grace lasts; one whose grace is over is not kept. */
  private setReplaced(keyId: string, secrets: StoredSecrets): void {
    const until = secrets.previousSecretUntil?.getTime() ?? 0;
    if (secrets.previousSecretHash !== null && until > this.clock.now()) {
      this.replaced.set(keyId, { hash: Buffer.from(secrets.previousSecretHash, 'hex'), until });
    } else this.replaced.delete(keyId);
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
      const found = new Map(rows.map((r) => [r.id, r]));
      for (const id of ids) {
        const row = found.get(id);
        if (row) this.set(id, row);
        else {
          this.hashes.delete(id);
          this.replaced.delete(id);
        }
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
