import type { WorkItem, WorkKind, WorkQueue } from './work-queue';
import { renewEveryMs } from './lease-policy';
import type { Clock, TimerHandle } from '../ports/clock';
import { systemClock } from '../shared/system-clock';

export type WorkHandler = (item: WorkItem) => Promise<void>;

export interface WorkerLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface WorkerOptions {
  batchSize: number;
  maxIdleMs: number;
  concurrency: number;
  /** The work lease; the leases of running items are renewed every third of it. */
  leaseSeconds: number;
  /** Longest pause between claims while the database does not answer. */
  maxBackoffMs?: number;
  /** What the pauses, renewals and retry delays are timed on (the system's by default). */
  clock?: Clock;
}

/**
 * Runs due work items: claims a batch, runs each handler, and sleeps until the next item is due
 * (at most `maxIdleMs`, so rows written by other instances are seen promptly). While handlers
 * run, their leases are renewed, so a slow sequence of calls is never taken over by another
 * instance. A handler that throws leaves its row leased; the lease expiry retries it. When the
 * database does not answer, claims back off (doubling up to `maxBackoffMs`) and resume by
 * themselves.
 */
export class Worker {
  private running = false;
  private wake?: () => void;
  private loop?: Promise<void>;
  private renewTimer?: TimerHandle;
  private failures = 0;
  /** Items whose handler is running: their leases are renewed. */
  private readonly held = new Map<number, WorkItem>();
  /** Items whose handler threw: leased until the lease runs out (the retry delay), then retried. */
  private readonly failed = new Map<number, { item: WorkItem; until: number }>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly clock: Clock;

  constructor(
    private readonly queue: WorkQueue,
    private readonly handlers: Record<WorkKind, WorkHandler>,
    private readonly log: WorkerLog,
    private readonly options: WorkerOptions,
  ) {
    this.clock = options.clock ?? systemClock;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
    this.renewTimer = this.clock.setInterval(() => void this.renew(), renewEveryMs(this.options.leaseSeconds));
    this.renewTimer.unref();
  }

  /** Something was just scheduled: look now rather than at the next tick. */
  nudge(): void {
    this.wake?.();
  }

  /** How many items this instance is running now. */
  get busy(): number {
    return this.inFlight.size;
  }

  private async renew(): Promise<void> {
    for (const [id, f] of this.failed) if (f.until <= this.clock.monotonic()) this.failed.delete(id);
    const running = [...this.held.values()];
    if (running.length === 0) return;
    try {
      await this.queue.renew(running);
    } catch (err) {
      this.log.warn({ err: String(err), items: running.length }, 'work lease renewal failed');
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed: WorkItem[] = [];
      let claimFailed = false;
      try {
        const room = this.options.concurrency - this.inFlight.size;
        if (room > 0) claimed = await this.queue.claim(Math.min(room, this.options.batchSize));
        if (this.failures > 0) this.log.info({ failures: this.failures }, 'work claims succeed again');
        this.failures = 0;
      } catch (err) {
        claimFailed = true;
        this.failures++;
        if (this.running) this.log.warn({ err: String(err), failures: this.failures }, 'work claim failed; backing off');
      }
      for (const item of claimed) this.launch(item);
      if (claimed.length > 0 && this.inFlight.size < this.options.concurrency) continue;
      let delay = this.options.maxIdleMs;
      if (claimFailed) {
        delay = Math.min(this.options.maxBackoffMs ?? 5_000, this.options.maxIdleMs * 2 ** Math.min(this.failures - 1, 10));
      } else {
        try {
          const next = await this.queue.nextDueInMs();
          if (next !== null) delay = Math.min(delay, Math.max(5, next));
        } catch {
          /* keep the default delay */
        }
      }
      await this.sleep(delay, claimFailed);
    }
  }

  private launch(item: WorkItem): void {
    this.held.set(item.id, item);
    const p = this.handlers[item.kind](item)
      .then(
        // The handler ended the claim itself (done, retryLater or the finisher deleted the row).
        () => undefined,
        (err) => {
          this.log.warn({ kind: item.kind, ref: item.ref, err: String(err) }, 'work item failed; it will be retried after its lease');
          this.failed.set(item.id, { item, until: this.clock.monotonic() + this.options.leaseSeconds * 1000 });
        },
      )
      .finally(() => {
        this.held.delete(item.id);
        this.inFlight.delete(p);
        if (this.running) this.wake?.();
      });
    this.inFlight.add(p);
  }

  private sleep(ms: number, backingOff: boolean): Promise<void> {
    // stop() may have come while a claim was on its way: its wake-up found no pause to cut short.
    if (!this.running) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = this.clock.setTimeout(resolve, ms);
      const wake = () => {
        this.clock.clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
      // While backing off, a nudge does not cut the pause short (only stop() does).
      this.wake = backingOff ? undefined : wake;
      this.stopWake = wake;
    });
  }

  private stopWake?: () => void;

  /**
   * Stops claiming and waits for the handlers already running, at most `deadlineMs`; then gives
   * back the leases this instance still holds (items still running or whose handler threw), so
   * another instance takes them at once. After it resolves this instance holds no lease.
   * Calling it again answers the same stop.
   */
  stop(deadlineMs = 30_000): Promise<void> {
    this.stopping ??= this.stopNow(deadlineMs);
    return this.stopping;
  }

  private stopping?: Promise<void>;

  private async stopNow(deadlineMs: number): Promise<void> {
    this.running = false;
    this.clock.clearInterval(this.renewTimer);
    this.stopWake?.();
    await this.loop;
    let timer: TimerHandle | undefined;
    const timedOut = await Promise.race([
      Promise.allSettled([...this.inFlight]).then(() => false),
      new Promise<boolean>((resolve) => (timer = this.clock.setTimeout(() => resolve(true), deadlineMs))),
    ]);
    this.clock.clearTimeout(timer);
    if (timedOut) this.log.warn({ running: this.inFlight.size }, 'work still running at the shutdown deadline; giving its leases back');
    const left = [...this.held.values(), ...[...this.failed.values()].filter((f) => f.until > this.clock.monotonic()).map((f) => f.item)];
    this.held.clear();
    this.failed.clear();
    if (left.length > 0) {
      try {
        await this.queue.release(left);
      } catch (err) {
        this.log.warn({ err: String(err), items: left.length }, 'could not give work leases back; they expire by themselves');
      }
    }
  }
}
