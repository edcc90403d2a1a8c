/**
 * Streams this instance is answering, so that one cut by the instance's death is still charged.
 * A stream's reservation lives in this instance's memory only; if the instance dies (SIGKILL, a
 * lost machine) before the stream settles, the lease it came from is closed by another instance
 * after the grace and, without a record of the stream, goes back whole: the answered part of the
 * call is free. With one, the close charges the stream its prompt (migration 20261126000000), as
 * a client that left before any content is charged.
 *
 * Writing a row per stream would cost the hot path a statement per call, so a stream is written
 * only once it has run for `writeAfterMs` (default 250 ms): a stream that ends sooner, as a fast
 * upstream's do, is never written, and a real model's stream of several seconds costs one
 * statement shared with every stream started in the same moment. A death within that first
 * moment still loses the charge (the README says so). Rows of settled streams are deleted in the
 * same ticks; one left behind (a delete that failed, a race with the write) is cleared when its
 * lease closes, which never charges a stream whose charge is recorded.
 */
import type { StreamStart } from './lease-store';

export interface StreamStartStore {
  writeStreamStarts(starts: readonly StreamStart[]): Promise<void>;
  forgetStreamStarts(requestIds: readonly string[]): Promise<void>;
}

export class StreamStarts {
  /** Started, not yet written, with when. */
  private readonly pending = new Map<string, { start: StreamStart; at: number }>();
  /** Written, not yet settled. */
  private readonly written = new Set<string>();
  /** Written and settled: rows to delete. */
  private settledIds: string[] = [];
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;

  constructor(
    private readonly store: StreamStartStore,
    private readonly writeAfterMs = 250,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  started(start: StreamStart): void {
    this.pending.set(start.requestId, { start, at: Date.now() });
    this.ticks();
  }

  /** The stream's charge is recorded (or kept in the journal to be): its row, if written, can go. */
  settled(requestId: string): void {
    if (this.pending.delete(requestId)) return;
    if (!this.written.delete(requestId)) return;
    this.settledIds.push(requestId);
    this.ticks();
  }

  private ticks(): void {
    this.timer ??= setInterval(() => void this.tick(), Math.max(20, this.writeAfterMs / 2)).unref();
  }

  /** Shutdown: no more ticks (the leases' closes clear the rows of settled streams). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.pending.clear();
  }

  /** Writes what is due and deletes what settled. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = Date.now();
      const due = [...this.pending.values()].filter((p) => now - p.at >= this.writeAfterMs).map((p) => p.start);
      if (due.length > 0) {
        for (const s of due) {
          this.pending.delete(s.requestId);
          this.written.add(s.requestId);
        }
        try {
          await this.store.writeStreamStarts(due);
        } catch (err) {
          // Tried again next tick, unless settled meanwhile.
          for (const s of due) if (this.written.delete(s.requestId)) this.pending.set(s.requestId, { start: s, at: now - this.writeAfterMs });
          this.onError(err);
        }
      }
      if (this.settledIds.length > 0) {
        const ids = this.settledIds;
        this.settledIds = [];
        // A failed delete leaves rows that the lease's close clears without charging them.
        await this.store.forgetStreamStarts(ids).catch(this.onError);
      }
      if (this.pending.size === 0 && this.settledIds.length === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    } finally {
      this.ticking = false;
    }
  }
}
