/**
 * An armed timer, opaque to its holder: it is cancelled through the clock that armed it.
 * `unref` lets the process exit while the timer waits (background upkeep must never keep it alive).
 */
export interface TimerHandle {
  unref(): TimerHandle;
}

/**
 * Time, as the domain and its adapters read it and wait on it. One is made at start-up (the
 * system's) and handed to whatever keeps time; a test hands a fake one and steps it, so nothing
 * waits for real time to pass and nothing depends on how busy the machine is.
 */
export interface Clock {
  /** Wall-clock epoch milliseconds: for times that name a moment (`created`, a signature's timestamp). */
  now(): number;
  /**
   * Milliseconds on a clock that only moves forward, for durations, deadlines and idle times
   * inside this process. The wall clock steps when NTP corrects it or a paused VM resumes, and
   * whatever was timed on it then lasted as long as the step: a key kept at 429 for 1,000 s after
   * the clock went back that far, a running idempotent call given up as abandoned (and taken over
   * by another instance) after it jumped ahead. Its zero is arbitrary: "never" is -Infinity, not 0.
   */
  monotonic(): number;
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(timer: TimerHandle | undefined | null): void;
  setInterval(callback: () => void, ms: number): TimerHandle;
  clearInterval(timer: TimerHandle | undefined | null): void;
}
