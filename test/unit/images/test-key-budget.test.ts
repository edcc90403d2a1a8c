import { TestKeyBudget } from '../../../src/domain/ratelimit/test-key-budget';

const budget = () => new TestKeyBudget({ maxPixelsPerRequest: 1000, concurrentPerKey: 2, concurrentPerInstance: 3 });

test('pixels x n over the cap is a 400 naming n; at the cap it passes', () => {
  const b = budget();
  expect(() => b.checkPixels(10, 10, 10)).not.toThrow();
  expect(() => b.checkPixels(10, 10, 11)).toThrow(expect.objectContaining({ type: 'invalid_request_error', param: 'n', code: 'test_key_pixel_limit' }));
});

test('a key gets two slots, the instance three; a release frees exactly one slot, once', () => {
  const b = budget();
  const a1 = b.acquire('a');
  const a2 = b.acquire('a');
  expect(() => b.acquire('a')).toThrow(expect.objectContaining({ type: 'rate_limit_exceeded', status: 429, retryAfterSeconds: 1, code: 'test_key_busy' }));
  const c1 = b.acquire('c');
  expect(() => b.acquire('d')).toThrow(expect.objectContaining({ status: 429, message: expect.stringContaining('busy with other test-key') }));
  a1();
  a1(); // a second call must not free another slot
  const d1 = b.acquire('d');
  expect(() => b.acquire('a')).toThrow(expect.objectContaining({ status: 429 }));
  for (const release of [a2, c1, d1]) release();
  expect(() => [b.acquire('a'), b.acquire('a'), b.acquire('c')]).not.toThrow();
});
