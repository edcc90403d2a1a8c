import type { Clock, TimerHandle } from '../ports/clock';
import { sleepOn, systemClock } from './system-clock';

/**
 * How long a request waits for the database (a read, a lease take) before it is answered 503:
 * a stalled or partitioned database sends no error, only silence, for as long as it lasts.
 */
export const DATABASE_ANSWER_DEADLINE_MS = 5_000;

/**
 * `work`'s answer, or `tooLate()` thrown once `ms` have passed without one. For work that may be
 * let go (a read): it goes on in the background and what it answers then is dropped.
 */
export function withinDeadline<T>(work: Promise<T>, ms: number, tooLate: () => Error, clock: Clock = systemClock): Promise<T> {
  let timer: TimerHandle | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => reject(tooLate()), ms);
  });
  // A late failure of the work, after the deadline answered, is nobody's to report.
  work.catch(() => undefined);
  return Promise.race([work, late]).finally(() => clock.clearTimeout(timer));
}

/**
 * Asks `done` now and every `everyMs` after until it says yes or `withinMs` have passed (on
 * `clock`'s monotonic time); answers whether it said yes. For waits on something another party ends: a
 * lease's calls settling, another instance giving its leases back.
 */
export async function waitUntil(done: () => boolean | Promise<boolean>, withinMs: number, everyMs: number, clock: Clock = systemClock): Promise<boolean> {
  const until = clock.monotonic() + withinMs;
  for (;;) {
    if (await done()) return true;
    if (clock.monotonic() >= until) return false;
    await sleepOn(clock, everyMs);
  }
}
