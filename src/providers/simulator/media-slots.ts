/**
 * How many simulator images are made at once in this process. sharp runs each pipeline on
 * libuv's thread pool (4 threads) with libvips' own threads beside it; left alone, ten heavy
 * edits keep every core busy and the event loop waits for CPU with them (on the 2-core bench
 * machine /healthz p99 went to ~500 ms). One core is left to the event loop: at most
 * availableParallelism() - 1 images (at least one) are in the making, the rest queue here.
 */
import { availableParallelism } from 'node:os';

export class MediaSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size = Math.max(1, availableParallelism() - 1)) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await work();
    } finally {
      // Hand the slot straight to the next in line (running stays the same), or free it.
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** The one instance every simulator image shares. */
export const mediaSlots = new MediaSlots();
