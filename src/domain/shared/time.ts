const DAY_MS = 86_400_000;
/** The last day asked for and its bounds: every billed call asks, and nearly always for today. */
let known = { day: '', start: 0, end: 0 };

/** The UTC calendar day of `at`, as YYYY-MM-DD (daily spend caps reset at UTC midnight). */
export function utcDay(at: Date): string {
  const t = at.getTime();
  if (t >= known.start && t < known.end) return known.day;
  const day = at.toISOString().slice(0, 10);
  const start = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate());
  known = { day, start, end: start + DAY_MS };
  return day;
}

export function secondsUntilNextUtcMidnight(at: Date): number {
  const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

export const unixSeconds = (at: Date = new Date()): number => Math.floor(at.getTime() / 1000);

/**
 * Milliseconds on a clock that only moves forward, for durations, deadlines and idle times inside
 * this process. The wall clock steps when NTP corrects it or a paused VM resumes, and whatever
 * was timed on it then lasted as long as the step: a key kept at 429 for 1,000 s after the clock
 * went back that far, a running idempotent call given up as abandoned (and taken over by another
 * instance) after it jumped ahead. Its zero is the process's start: "never" is -Infinity, not 0.
 */
export const monotonicMillis = (): number => performance.now();
