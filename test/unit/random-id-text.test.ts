import { randomIdText } from '../../src/domain/shared/ids';

test('ids from the pool are base64url of the asked length, all different, across refills', () => {
  const seen = new Set<string>();
  // 12 bytes each: 4096 / 12 ids per refill, so 2,000 ids cross several refills.
  for (let i = 0; i < 2000; i++) {
    const id = randomIdText(12);
    expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    seen.add(id);
  }
  expect(seen.size).toBe(2000);
  expect(randomIdText(5000)).toMatch(/^[A-Za-z0-9_-]{6667}$/);
});

test('the pooled bytes look uniform: every base64url character appears about equally', () => {
  const counts = new Map<string, number>();
  const text = Array.from({ length: 3000 }, () => randomIdText(12)).join('');
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  expect(counts.size).toBe(64);
  const expected = text.length / 64;
  for (const n of counts.values()) expect(Math.abs(n - expected)).toBeLessThan(expected * 0.25);
});
