/**
 * A Clock whose time moves only when the test steps it (@sinonjs/fake-timers' createClock, not
 * installed on the globals): the code under test arms its timers on it, and the test steps time
 * with `tickAsync` instead of sleeping, so nothing depends on how busy the machine is. The wall
 * clock starts at the real time (a day computed from it is today's), monotonic time at 0.
 */
import { createClock } from '@sinonjs/fake-timers';
import type { Clock, TimerHandle } from '../../src/domain/ports/clock';

/** A timer armed on the fake clock and not yet run out (or cleared). */
export interface ArmedTimer {
  /** The delay it was armed with. */
  delayMs: number;
  /** Fake milliseconds left until it runs. */
  dueInMs: number;
  repeats: boolean;
}

export interface FakeClock extends Clock {
  /**
   * Steps time by `ms`, running every timer due on the way in order, and letting the promise
   * callbacks they start run between them (fake-timers' tickAsync).
   */
  tickAsync(ms: number): Promise<void>;
  /** The timers armed now, soonest first. */
  armed(): ArmedTimer[];
  /** Resolves once a timer is armed that `matches` (at once if one is armed already). */
  whenArmed(matches: (timer: ArmedTimer) => boolean): Promise<ArmedTimer>;
  /** Moves the wall clock by `ms` (an NTP step, a resumed VM): monotonic time and the timers stay where they are. */
  stepWall(ms: number): void;
  /** A loop kept from turning for `ms` (a synchronous CPU hog): time jumps on, and each timer due meanwhile runs once, late. */
  stall(ms: number): void;
}

interface Entry {
  delayMs: number;
  callAt: number;
  repeats: boolean;
}

export function fakeClock(): FakeClock {
  const clock = createClock(Date.now());
  const started = clock.now;
  /** Wall time's difference from the timers' time, moved by stepWall only. */
  let wallStep = 0;
  const entries = new Map<unknown, Entry>();
  const waiters: Array<{ matches: (timer: ArmedTimer) => boolean; resolve: (timer: ArmedTimer) => void }> = [];
  const view = (e: Entry): ArmedTimer => ({ delayMs: e.delayMs, dueInMs: e.callAt - clock.now, repeats: e.repeats });
  const arm = (handle: unknown, entry: Entry) => {
    entries.set(handle, entry);
    for (const waiter of [...waiters]) {
      if (!waiter.matches(view(entry))) continue;
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(view(entry));
    }
  };
  const handleOf = (id: unknown) => id as TimerHandle;

  return {
    now: () => clock.now + wallStep,
    monotonic: () => clock.now - started,
    setTimeout(callback, ms) {
      const id: unknown = clock.setTimeout(() => {
        entries.delete(id);
        callback();
      }, ms);
      arm(id, { delayMs: ms, callAt: clock.now + Math.floor(ms), repeats: false });
      return handleOf(id);
    },
    clearTimeout(timer) {
      if (!timer) return;
      entries.delete(timer);
      clock.clearTimeout(timer as unknown as number);
    },
    setInterval(callback, ms) {
      const entry: Entry = { delayMs: ms, callAt: clock.now + Math.floor(ms), repeats: true };
      const id: unknown = clock.setInterval(() => {
        entry.callAt = clock.now + Math.floor(ms);
        callback();
      }, ms);
      arm(id, entry);
      return handleOf(id);
    },
    clearInterval(timer) {
      if (!timer) return;
      entries.delete(timer);
      clock.clearInterval(timer as unknown as number);
    },
    async tickAsync(ms) {
      await clock.tickAsync(ms);
    },
    armed: () => [...entries.values()].map(view).sort((a, b) => a.dueInMs - b.dueInMs),
    whenArmed(matches) {
      const found = [...entries.values()].map(view).find(matches);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ matches, resolve }));
    },
    stepWall(ms) {
      wallStep += ms;
    },
    stall(ms) {
      clock.jump(ms);
    },
  };
}
