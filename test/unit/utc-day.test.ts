import { utcDay } from '../../src/domain/shared/time';

test('utcDay answers the UTC calendar day of any instant, in any order of asking', () => {
  const instants = [
    '2026-11-22T23:59:59.999Z',
    '2026-11-23T00:00:00.000Z',
    '2026-11-22T12:00:00.000Z',
    '2026-12-31T23:59:59.999Z',
    '2027-01-01T00:00:00.000Z',
    '2028-02-29T10:00:00.000Z',
    '1969-12-31T23:59:59.999Z',
    '2026-11-23T00:00:00.000Z',
    '2026-11-22T23:59:59.999Z',
  ];
  for (const iso of instants) expect(utcDay(new Date(iso))).toBe(iso.slice(0, 10));
  // The same instant written in another zone is the same UTC day.
  expect(utcDay(new Date('2026-11-23T01:30:00+02:00'))).toBe('2026-11-22');
});

test('utcDay of an invalid date is an error, as before', () => {
  expect(() => utcDay(new Date('not a date'))).toThrow(RangeError);
});
