import type { WorkItem, WorkKind, WorkQueue } from './work-queue';

export type WorkHandler = (item: WorkItem) => Promise<void>;

export interface WorkerLog {
  warn(obj: object, msg: string): void;
}

/**
 * Runs due work items: claims a batch, runs each handler, and sleeps until the next item is due
 * (at most `maxIdleMs`, so rows written by other instances are seen promptly). A handler that
 * throws leaves its row leased; the lease expiry retries it.
 */
export class Worker {
  private running = false;
  private wake?: () => void;
  private loop?: Promise<void>;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly queue: WorkQueue,
    private readonly handlers: Record<WorkKind, WorkHandler>,
    private readonly log: WorkerLog,
    private readonly options: { batchSize: number; maxIdleMs: number; concurrency: number },
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run();
  }

  /** Something was just scheduled: look now rather than at the next tick. */
  nudge(): void {
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let claimed: WorkItem[] = [];
      try {
        const room = this.options.concurrency - this.inFlight.size;
        if (room > 0) claimed = await this.queue.claim(Math.min(room, this.options.batchSize));
      } catch (err) {
        if (this.running) this.log.warn({ err: String(err) }, 'work claim failed');
      }
      for (const item of claimed) {
        const p = this.handlers[item.kind](item)
          .catch((err) => this.log.warn({ kind: item.kind, ref: item.ref, err: String(err) }, 'work item failed; it will be retried after its lease'))
          .finally(() => {
            this.inFlight.delete(p);
            this.wake?.();
          });
        this.inFlight.add(p);
      }
      if (claimed.length > 0 && this.inFlight.size < this.options.concurrency) continue;
      let delay = this.options.maxIdleMs;
      try {
        const next = await this.queue.nextDueInMs();
        if (next !== null) delay = Math.min(delay, Math.max(5, next));
      } catch {
        /* keep the default delay */
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Stops claiming and waits for the handlers already running. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
  }
}
