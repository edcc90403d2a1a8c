/**
 * Streams this instance is answering, so that one cut by the instance's death is still charged.
 * A stream's reservation lives in this instance's memory only; if the instance dies (SIGKILL, a
 * lost machine) before the stream settles, the lease it came from is closed by another instance
 * after the grace and, without a record of the stream, goes back whole: the answered part of the
 * call is free. With one, the close charges the stream what it owed when last written: its
 * prompt and what it had relayed (svc_close_lease), as a client that left is charged.
 *
 * Writing a row per stream would cost the hot path a statement per call, so a stream is written
 * only once it has run for `writeAfterMs` (default 50 ms; the ticks come every half of that),
 * and what the written streams owe is brought up to date every `updateEveryMs` (default 125 ms)
 * while they run, settled ones' rows deleted then too: a stream that ends sooner, as a fast
 * upstream's do, is never written, and a real model's stream of several seconds costs a share of
 * one statement per tick with every stream due at that moment. A death within that first moment
 * (50 to 75 ms) still loses the charge, and one later loses what was relayed since the last
 * update (the README says so). A row left behind (a delete that failed, a race with the write)
 * is cleared when its lease closes, which never charges a stream whose charge is recorded.
 */
import type { StreamStart } from './lease-store';
import type { Clock, TimerHandle } from '../ports/clock';
import { systemClock } from '../shared/system-clock';

export interface StreamStartStore {
  writeStreamStarts(starts: readonly StreamStart[]): Promise<void>;
  updateStreamsOwed(items: ReadonlyArray<{ requestId: string; owedMicro: number }>): Promise<void>;
  forgetStreamStarts(requestIds: readonly string[]): Promise<void>;
}

/** A stream without what it owes, which `owed()` tells whenever asked. */
export type StreamOpening = Omit<StreamStart, 'owedMicro'>;

interface Running {
  start: StreamOpening;
  owed: () => number;
  at: number;
  /** What its row says it owes (undefined: not written yet). */
  written?: number;
}

export interface StreamStartTimes {
  /** How long a stream runs before it is written. */
  writeAfterMs: number;
  /** How often the written streams' rows are brought up to date and the settled ones' deleted. */
  updateEveryMs: number;
}

export const STREAM_START_TIMES: StreamStartTimes = { writeAfterMs: 50, updateEveryMs: 125 };

export class StreamStarts {
  private readonly running = new Map<string, Running>();
  /** Written and settled: rows to delete. */
  private settledIds: string[] = [];
  private timer: TimerHandle | null = null;
  private ticking = false;
  private updatedAt = -Infinity;

  constructor(
    private readonly store: StreamStartStore,
    private readonly times: StreamStartTimes = STREAM_START_TIMES,
    private readonly onError: (err: unknown) => void = () => undefined,
    private readonly clock: Clock = systemClock,
  ) {}

  started(start: StreamOpening, owed: () => number): void {
    this.running.set(start.requestId, { start, owed, at: this.clock.monotonic() });
    this.ticks();
  }

  /** The stream's charge is recorded (or kept in the journal to be): its row, if written, can go. */
  settled(requestId: string): void {
    const stream = this.running.get(requestId);
    if (!stream) return;
    this.running.delete(requestId);
    if (stream.written === undefined) return;
    this.settledIds.push(requestId);
    this.ticks();
  }

  /** Shutdown: no more ticks (the leases' closes clear the rows of settled streams). */
  stop(): void {
    this.clock.clearInterval(this.timer);
    this.timer = null;
    this.running.clear();
  }

  private ticks(): void {
    this.timer ??= this.clock.setInterval(() => void this.tick(), Math.max(20, this.times.writeAfterMs / 2)).unref();
  }

  /** Writes the streams now due, brings up to date what the written ones owe, deletes what settled. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.clock.monotonic();
      const updating = now - this.updatedAt >= this.times.updateEveryMs;
      const due: Array<[Running, StreamStart]> = [];
      const grown: Array<[Running, number]> = [];
      for (const stream of this.running.values()) {
        if (now - stream.at < this.times.writeAfterMs) continue;
        if (stream.written === undefined) {
          due.push([stream, { ...stream.start, owedMicro: stream.owed() }]);
        } else if (updating) {
          const owedMicro = stream.owed();
          if (owedMicro > stream.written) grown.push([stream, owedMicro]);
        }
      }
      await this.write(due, grown);
      if (updating) this.updatedAt = now;
      if (updating && this.settledIds.length > 0) {
        const ids = this.settledIds;
        this.settledIds = [];
        // A failed delete leaves rows that the lease's close clears without charging them.
        await this.store.forgetStreamStarts(ids).catch(this.onError);
      }
      if (this.running.size === 0 && this.settledIds.length === 0 && this.timer) {
        this.clock.clearInterval(this.timer);
        this.timer = null;
      }
    } finally {
      this.ticking = false;
    }
  }

  /** A failed write is tried again next tick (what was not written stays unwritten). */
  private async write(due: Array<[Running, StreamStart]>, grown: Array<[Running, number]>): Promise<void> {
    try {
      if (due.length > 0) {
        await this.store.writeStreamStarts(due.map(([, row]) => row));
        for (const [stream, row] of due) stream.written = row.owedMicro;
      }
      if (grown.length > 0) {
        await this.store.updateStreamsOwed(grown.map(([stream, owedMicro]) => ({ requestId: stream.start.requestId, owedMicro })));
        for (const [stream, owedMicro] of grown) stream.written = owedMicro;
      }
    } catch (err) {
      this.onError(err);
    }
  }
}
