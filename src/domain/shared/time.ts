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

/** The process's clock that only moves forward (see Clock.monotonic); its zero is the process's start. */
export const monotonicMillis = (): number => performance.now();
