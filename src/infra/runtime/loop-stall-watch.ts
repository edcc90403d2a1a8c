/**
 * Whether this process's event loop has lately been kept from turning past a bound: what
 * /livez answers for. A loop that does not turn at all answers no probe (the probe's timeout
 * says so); one that turns between stalls would answer each probe it reaches, so a timer armed
 * every TICK_MS notes how late it ran, and a lateness past the bound is held against the process
 * for HOLD_MS: long enough for a liveness probe (Kubernetes' three failures ten seconds apart) to
 * see it, whichever turn of the loop the probe lands on.
 */
import type { Clock, TimerHandle } from '../../domain/ports/clock';

const TICK_MS = 500;
/** How long a stall past the bound keeps /livez failing. */
export const STALL_HOLD_MS = 60_000;

export interface LoopStall {
  /** How late the watch's timer ran, ms. */
  stallMs: number;
  /** How long ago that was, ms. */
  agoMs: number;
}

export class LoopStallWatch {
  private timer: TimerHandle | undefined;
  private last = 0;
  private worst: { at: number; ms: number } | undefined;

  /** `boundMs`: a stall longer than this is a wedged process; 0 turns the watch off. */
  constructor(
    private readonly clock: Clock,
    private readonly boundMs: number,
  ) {}

  start(): void {
    if (this.boundMs === 0 || this.timer) return;
    this.last = this.clock.monotonic();
    this.timer = this.clock.setInterval(() => this.tick(), TICK_MS).unref();
  }

  stop(): void {
    this.clock.clearInterval(this.timer);
    this.timer = undefined;
  }

  /** The last stall past the bound, while it is held; undefined for a loop that turns. */
  stalled(): LoopStall | undefined {
    const now = this.clock.monotonic();
    if (!this.worst || now - this.worst.at >= STALL_HOLD_MS) return undefined;
    return { stallMs: this.worst.ms, agoMs: now - this.worst.at };
  }

  private tick(): void {
    const now = this.clock.monotonic();
    const late = now - this.last - TICK_MS;
    this.last = now;
    if (late > this.boundMs) this.worst = { at: now, ms: Math.round(late) };
  }
}
