import type { Clock, TimerHandle } from '../ports/clock';
import { withinDeadline } from '../shared/deadline';
import { systemClock } from '../shared/system-clock';

/**
 * Writes the database did not take (it was away), kept in memory by key and tried again every
 * `retryMs`, oldest first, until they land. A newer write of a key replaces a kept one; what they
 * hold is bounded by `maxBytes`, past which the oldest are let go (and counted to `onDropped`).
 */
export class UnwrittenWrites {
  private readonly kept = new Map<string, { write: () => Promise<unknown>; bytes: number }>();
  private bytes = 0;
  private retryTimer: TimerHandle | null = null;

  constructor(
    private readonly retryMs: number,
    private readonly maxBytes: number,
    private readonly onDropped: (count: number) => void,
    /**
     * How long the first attempt may wait (0: as long as it takes). A stalled database sends no
     * error: past this the write is kept and tried again like one that failed (every kept write
     * is idempotent), and the caller goes on (a stored response is sent all the same).
     */
    private readonly answerWithinMs = 0,
    private readonly clock: Clock = systemClock,
  ) {}

  get size(): number {
    return this.kept.size;
  }

  /** The ids of the writes kept now. */
  ids(): IterableIterator<string> {
    return this.kept.keys();
  }

  /** Runs `write`; when it fails, keeps it to be tried again, and throws. */
  async run(id: string, bytes: number, write: () => Promise<unknown>): Promise<void> {
    try {
      const attempt = write();
      await (this.answerWithinMs > 0
        ? withinDeadline(attempt, this.answerWithinMs, () => new Error('the database did not answer in time'), this.clock)
        : attempt);
    } catch (err) {
      this.keep(id, { write, bytes });
      throw err;
    }
    // A write of the key that landed makes one kept from before it moot.
    this.forget(id);
  }

  private keep(id: string, entry: { write: () => Promise<unknown>; bytes: number }): void {
    this.forget(id);
    this.kept.set(id, entry);
    this.bytes += entry.bytes;
    let dropped = 0;
    for (const [oldest] of this.kept) {
      if (this.bytes <= this.maxBytes || oldest === id) break;
      this.forget(oldest);
      dropped++;
    }
    if (dropped > 0) this.onDropped(dropped);
    this.scheduleRetry();
  }

  private forget(id: string): void {
    const entry = this.kept.get(id);
    if (!entry) return;
    this.kept.delete(id);
    this.bytes -= entry.bytes;
  }

  private scheduleRetry(): void {
    this.retryTimer ??= this.clock.setTimeout(() => void this.retry(), this.retryMs).unref();
  }

  /** Tries the kept writes in order; the first that fails means the database is still away. */
  private async retry(): Promise<void> {
    for (const [id, entry] of [...this.kept]) {
      try {
        await entry.write();
      } catch {
        break;
      }
      if (this.kept.get(id) === entry) this.forget(id);
    }
    this.retryTimer = null;
    if (this.kept.size > 0) this.scheduleRetry();
  }
}
