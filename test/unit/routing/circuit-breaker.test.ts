/**
 * The circuit breaker on an injected clock: it opens after at least 5 calls with at least half
 * failed in 30 s, takes nothing for 30 s, lets one probe through, closes on its success and opens
 * again on its failure; two breakers on one feed (two instances) open and close together, and a
 * message about a route id that names another upstream there is ignored.
 */
import { BREAKER_OPEN_MS, CircuitBreakers } from '../../../src/domain/routing/circuit-breaker';
import { LocalTopicFeed } from '../../../src/infra/events/local-topic-feed';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

test('opens at 5 calls and half of them failed, not before; a window of successes keeps it closed', () => {
  const c = clock();
  const b = new CircuitBreakers({ now: c.now });
  for (let i = 0; i < 6; i++) b.record('a', true);
  for (let i = 0; i < 5; i++) b.record('a', false, 'HTTP 500');
  expect(b.state('a')).toBe('closed'); // 5 of 11 failed
  b.record('a', false, 'HTTP 500');
  expect(b.state('a')).toBe('open'); // 6 of 12
  expect(b.admit('a')).toBe(false);
  expect(b.health('a')).toMatchObject({ state: 'open', window: { calls: 12, failures: 6 }, lastError: 'HTTP 500' });

  const fresh = new CircuitBreakers({ now: c.now });
  for (let i = 0; i < 4; i++) fresh.record('x', false);
  expect(fresh.state('x')).toBe('closed'); // 4 calls: too few to judge
});

test('failures older than 30 s no longer count', () => {
  const c = clock();
  const b = new CircuitBreakers({ now: c.now });
  for (let i = 0; i < 4; i++) b.record('a', false);
  c.advance(31_000);
  b.record('a', false);
  expect(b.state('a')).toBe('closed');
  expect(b.health('a').window).toEqual({ calls: 1, failures: 1 });
});

test('after 30 s open, one probe: its success closes the route, its failure opens it for another 30 s', () => {
  const c = clock();
  const b = new CircuitBreakers({ now: c.now });
  for (let i = 0; i < 5; i++) b.record('a', false);
  expect(b.state('a')).toBe('open');
  c.advance(BREAKER_OPEN_MS - 1);
  expect(b.admit('a')).toBe(false);
  c.advance(1);
  expect(b.state('a')).toBe('half_open');
  expect(b.admit('a')).toBe(true);
  expect(b.admit('a')).toBe(false); // one probe at a time
  b.record('a', false);
  expect(b.state('a')).toBe('open');
  c.advance(BREAKER_OPEN_MS);
  expect(b.admit('a')).toBe(true);
  b.record('a', true);
  expect(b.state('a')).toBe('closed');
  expect(b.health('a').window).toEqual({ calls: 0, failures: 0 });
});

test('a probe whose client left is given back: the next call probes', () => {
  const c = clock();
  const b = new CircuitBreakers({ now: c.now });
  for (let i = 0; i < 5; i++) b.record('a', false);
  c.advance(BREAKER_OPEN_MS);
  expect(b.admit('a')).toBe(true);
  b.releaseProbe('a');
  expect(b.admit('a')).toBe(true);
});

test('two instances on one feed: a route opened by one is open on the other, for the time left; closed by a probe on one, closed on both', () => {
  const c = clock();
  const feed = new LocalTopicFeed();
  const same = () => 'upstream-1';
  const a = new CircuitBreakers({ now: c.now, feed, upstreamOf: same });
  const b = new CircuitBreakers({ now: c.now, feed, upstreamOf: same });
  const elsewhere = new CircuitBreakers({ now: c.now, feed, upstreamOf: () => 'another-upstream' });
  for (let i = 0; i < 5; i++) a.record('r', false);
  expect([a.state('r'), b.state('r'), elsewhere.state('r')]).toEqual(['open', 'open', 'closed']);
  c.advance(BREAKER_OPEN_MS);
  expect(b.state('r')).toBe('half_open');
  expect(a.admit('r')).toBe(true);
  a.record('r', true);
  expect([a.state('r'), b.state('r')]).toEqual(['closed', 'closed']);
});
