/**
 * A key's lastUsed, written behind its requests. It has a minute's resolution, and the keys used
 * in the last moment are written together, one statement for all of them (thousands of keys in
 * use would otherwise cost a commit each per minute on the request path).
 */
import type { Clock, TimerHandle } from '../ports/clock';
import type { KeyRepository } from './key-repository';

/** lastUsed is a hint, not an audit trail: written at most once a minute per key. */
const LAST_USED_RESOLUTION_MS = 60_000;
/** How long a key's lastUsed waits for others to be written with it. */
const LAST_USED_FLUSH_MS = 500;
const MAX_BATCH = 1000;

export class LastUsedWriter {
  private readonly written = new Map<string, number>();
  private readonly pending = new Set<string>();
  private flush: TimerHandle | undefined;

  constructor(
    private readonly keys: Pick<KeyRepository, 'markUsed'>,
    private readonly clock: Clock,
  ) {}

  touch(keyId: string): void {
    const now = this.clock.monotonic();
    if (now - (this.written.get(keyId) ?? -Infinity) < LAST_USED_RESOLUTION_MS) return;
    this.written.set(keyId, now);
    this.pending.add(keyId);
    this.schedule();
  }

  private schedule(): void {
    if (this.flush) return;
    this.flush = this.clock.setTimeout(() => {
      this.flush = undefined;
      const ids = [...this.pending].slice(0, MAX_BATCH);
      for (const id of ids) this.pending.delete(id);
      if (this.pending.size > 0) this.schedule();
      this.keys.markUsed(ids).catch(() => undefined);
    }, LAST_USED_FLUSH_MS);
    this.flush.unref();
  }
}
