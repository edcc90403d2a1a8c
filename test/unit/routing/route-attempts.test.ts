/**
 * The attempt rules over a model's routes, on an injected clock and sleep: priority, then weight
 * (within a tolerance over 1,000 calls); a retryable failure goes to another route, else the same
 * one; an upstream Retry-After is waited when it fits in the budget and ends the attempts when it
 * does not; a client's fault is the answer at once; attempts are bounded; a client that left
 * stops them; every route open is a 503 without a call.
 */
import { attemptRoutes, type RoutedAttemptFailure, type RoutingDeps } from '../../../src/domain/routing/route-attempts';
import { CircuitBreakers } from '../../../src/domain/routing/circuit-breaker';
import { CallAbort } from '../../../src/domain/shared/call-signal';

class Failure extends Error {
  constructor(readonly failure: RoutedAttemptFailure) {
    super(failure.summary);
  }
}
const retryable = (retryAfterSeconds?: number) => new Failure({ retryable: true, upstreamFault: true, retryAfterSeconds, summary: 'HTTP 503' });
const clientFault = () => new Failure({ retryable: false, upstreamFault: false, summary: 'HTTP 400' });

function setup(random: () => number = Math.random) {
  let t = 0;
  const slept: number[] = [];
  const reports: string[] = [];
  const breakers = new CircuitBreakers({ now: () => t });
  const deps: RoutingDeps = {
    breakers,
    classify: (err) => (err as Failure).failure,
    report: (a) => reports.push(`${a.route}:${a.outcome}${a.retried ? ':retried' : ''}`),
    now: () => t,
    random,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
  };
  return { deps, slept, reports, breakers, advance: (ms: number) => (t += ms) };
}

const route = (id: string, priority = 0, weight = 1) => ({ id, priority, weight });
const model = (routes: ReturnType<typeof route>[], attempts = 3, budgetSeconds = 30) => ({ id: 'm', routes, retry: { attempts, budgetSeconds } });

test('the lowest priority first; a retryable failure goes on to the next route at once', async () => {
  const { deps, slept, reports } = setup();
  const asked: string[] = [];
  const answer = await attemptRoutes(deps, model([route('b', 1), route('a', 0)]), undefined, async (r) => {
    asked.push(r.id);
    if (r.id === 'a') throw retryable(7);
    return 'from b';
  });
  expect([answer, asked, slept]).toEqual(['from b', ['a', 'b'], []]);
  expect(reports).toEqual(['a:failed:retried', 'b:ok']);
});

test('weights share one priority within a tolerance over 1,000 calls', async () => {
  const { deps } = setup();
  const counts: Record<string, number> = { a: 0, b: 0 };
  for (let i = 0; i < 1000; i++) await attemptRoutes(deps, model([route('a', 0, 3), route('b', 0, 1)]), undefined, async (r) => counts[r.id]++);
  expect(counts.a).toBeGreaterThan(680);
  expect(counts.a).toBeLessThan(820);
  expect(counts.a + counts.b).toBe(1000);
});

test('one route: a Retry-After that fits in the budget is waited, one that does not ends the attempts', async () => {
  const fits = setup();
  let calls = 0;
  await expect(attemptRoutes(fits.deps, model([route('a')]), undefined, async () => (++calls === 1 ? Promise.reject(retryable(7)) : 'second'))).resolves.toBe(
    'second',
  );
  expect(fits.slept).toEqual([7000]);

  const tooLong = setup();
  calls = 0;
  const err = retryable(40);
  await expect(attemptRoutes(tooLong.deps, model([route('a')], 3, 30), undefined, async () => (calls++, Promise.reject(err)))).rejects.toBe(err);
  expect([calls, tooLong.slept]).toEqual([1, []]);
});

test("the client's fault is the answer at once, and no mark against the route", async () => {
  const { deps, breakers } = setup();
  const asked: string[] = [];
  const err = clientFault();
  await expect(attemptRoutes(deps, model([route('a'), route('b', 1)]), undefined, async (r) => (asked.push(r.id), Promise.reject(err)))).rejects.toBe(err);
  expect(asked).toEqual(['a']);
  expect(breakers.health('a').window).toEqual({ calls: 1, failures: 0 });
});

test('at most `attempts` calls, the last failure answered', async () => {
  const { deps } = setup();
  let calls = 0;
  const errors = [retryable(), retryable(), retryable(), retryable()];
  await expect(attemptRoutes(deps, model([route('a'), route('b')], 3), undefined, async () => Promise.reject(errors[calls++]))).rejects.toBe(errors[2]);
  expect(calls).toBe(3);
});

test('a client that left stops the attempts, and its probe is not held against the route', async () => {
  const { deps, breakers } = setup();
  const abort = new CallAbort();
  let calls = 0;
  await expect(
    attemptRoutes(deps, model([route('a'), route('b')]), abort, async () => {
      calls++;
      abort.abort(new Error('client left'));
      throw retryable();
    }),
  ).rejects.toBeInstanceOf(Failure);
  expect(calls).toBe(1);
  expect(breakers.health('a').window.calls).toBe(0);
});

test('a route whose circuit is open is passed by; every route open is a 503 upstream_unavailable with Retry-After, and nothing is called', async () => {
  const { deps, breakers, advance } = setup();
  for (let i = 0; i < 5; i++) breakers.record('a', false);
  const asked: string[] = [];
  await attemptRoutes(deps, model([route('a'), route('b', 1)]), undefined, async (r) => asked.push(r.id));
  expect(asked).toEqual(['b']);
  for (let i = 0; i < 5; i++) breakers.record('b', false);
  advance(10_000);
  await expect(attemptRoutes(deps, model([route('a'), route('b', 1)]), undefined, async (r) => asked.push(r.id))).rejects.toMatchObject({
    status: 503,
    code: 'upstream_unavailable',
    retryAfterSeconds: 20,
  });
  expect(asked).toEqual(['b']);
});

test("the last attempt allowed is the answer at once: the upstream's Retry-After is passed on, not waited", async () => {
  for (const attempts of [1, 2]) {
    const { deps, slept, reports } = setup();
    let calls = 0;
    const failing = attemptRoutes(deps, model([route('a')], attempts), undefined, async () => {
      calls++;
      throw retryable(7);
    });
    await expect(failing).rejects.toMatchObject({ failure: { retryAfterSeconds: 7 } });
    expect(calls).toBe(attempts);
    // Between attempts the Retry-After is waited; after the last, nothing is.
    expect(slept).toEqual(Array(attempts - 1).fill(7000));
    expect(reports.at(-1)).toBe('a:failed');
  }
});
