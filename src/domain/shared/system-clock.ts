import type { Clock } from '../ports/clock';
import { monotonicMillis } from './time';

/** The process's own clock and timers: what every Clock defaults to outside tests. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: monotonicMillis,
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (timer) => clearTimeout((timer ?? undefined) as NodeJS.Timeout | undefined),
  setInterval: (callback, ms) => setInterval(callback, ms),
  clearInterval: (timer) => clearInterval((timer ?? undefined) as NodeJS.Timeout | undefined),
};

/** Waits `ms` on `clock`. */
export const sleepOn = (clock: Clock, ms: number): Promise<void> => new Promise((resolve) => clock.setTimeout(resolve, ms));
