/** The UTC calendar day of `at`, as YYYY-MM-DD (daily spend caps reset at UTC midnight). */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

export function secondsUntilNextUtcMidnight(at: Date): number {
  const next = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - at.getTime()) / 1000));
}

export const unixSeconds = (at: Date = new Date()): number => Math.floor(at.getTime() / 1000);
