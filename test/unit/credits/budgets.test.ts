/**
 * A budget's UTC calendar periods: a day from midnight, a week from Monday 00:00, a month from the
 * 1st; the refusal of a spent budget and its Retry-After to the period's end, at the boundaries
 * where a client would wait wrongly (a Sunday night, the last hour of a month, a leap February).
 */
import { budgetExceeded, periodEnd, periodStart, secondsUntilPeriodEnd } from '../../../src/domain/credits/budgets';

const at = (iso: string) => new Date(iso);
const iso = (d: Date) => d.toISOString();

test('a week starts on Monday 00:00 UTC, whatever day of the week it is asked on', () => {
  // 2026-12-07 is a Monday.
  for (const day of ['2026-12-07T00:00:00.000Z', '2026-12-09T13:14:15.000Z', '2026-12-13T23:59:59.999Z']) {
    expect(iso(periodStart('week', at(day)))).toBe('2026-12-07T00:00:00.000Z');
    expect(iso(periodEnd('week', at(day)))).toBe('2026-12-14T00:00:00.000Z');
  }
  // A week across the year's end.
  expect(iso(periodStart('week', at('2027-01-01T08:00:00Z')))).toBe('2026-12-28T00:00:00.000Z');
  expect(iso(periodEnd('week', at('2027-01-01T08:00:00Z')))).toBe('2027-01-04T00:00:00.000Z');
  // An instant written in another zone is its UTC instant's week: Monday 01:30 in +02:00 is Sunday in UTC.
  expect(iso(periodStart('week', at('2026-12-14T01:30:00+02:00')))).toBe('2026-12-07T00:00:00.000Z');
});

test('a month starts on the 1st 00:00 UTC and ends on the next 1st, February of a leap year included', () => {
  expect(iso(periodStart('month', at('2026-12-31T23:59:59Z')))).toBe('2026-12-01T00:00:00.000Z');
  expect(iso(periodEnd('month', at('2026-12-31T23:59:59Z')))).toBe('2027-01-01T00:00:00.000Z');
  expect(iso(periodEnd('month', at('2028-02-29T12:00:00Z')))).toBe('2028-03-01T00:00:00.000Z');
  expect(iso(periodEnd('day', at('2028-02-28T12:00:00Z')))).toBe('2028-02-29T00:00:00.000Z');
});

test("a spent week's or month's budget is budget_exceeded, Retry-After to the period's end; the day's stays daily_cap_exceeded to midnight", () => {
  // Sunday 23:00 UTC: the week ends in an hour, the day too.
  const sunday = at('2026-12-13T23:00:00Z');
  expect(budgetExceeded('week', sunday)).toMatchObject({ status: 429, type: 'budget_exceeded', code: 'week_budget', retryAfterSeconds: 3600 });
  expect(budgetExceeded('day', sunday)).toMatchObject({ status: 429, type: 'daily_cap_exceeded', code: null, retryAfterSeconds: 3600 });
  // Monday 00:00:00.5: almost a whole week.
  expect(budgetExceeded('week', at('2026-12-14T00:00:00.500Z')).retryAfterSeconds).toBe(7 * 86_400);
  // The last 90 minutes of December (a Thursday): the month ends before the week does.
  const lastEvening = at('2026-12-31T22:30:00Z');
  expect(budgetExceeded('month', lastEvening)).toMatchObject({ type: 'budget_exceeded', code: 'month_budget', retryAfterSeconds: 5400 });
  expect(secondsUntilPeriodEnd('week', lastEvening)).toBe(3 * 86_400 + 5400);
  // Never 0: the last instant of a period still waits a second.
  expect(secondsUntilPeriodEnd('month', at('2026-12-31T23:59:59.999Z'))).toBe(1);
});
