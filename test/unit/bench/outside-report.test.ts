/**
 * The outside phase's verdicts (bench/outside-report.ts): the figures issue 46 sets targets for,
 * read off a load's results and marked met or not met as its reader would mark them by hand.
 */
import { outsideTargets, renderOutsideMarkdown, type OutsideLoad, type OutsideResult } from '../../../bench/outside-report';
import type { PhaseResult } from '../../../bench/phase';

function result(target: PhaseResult['target'], requestsPerSecond: number, mean: number, p99: number): PhaseResult {
  return {
    id: `outside-${target}`,
    title: target,
    target,
    streamed: false,
    connections: 32,
    durationSeconds: 8,
    requestsPerSecond,
    completed2xx: Math.round(requestsPerSecond * 8),
    latencyMs: { mean, p50: mean, p90: p99, p99, max: p99 },
    autocannonLatencyMs: { p50: Math.round(mean), p99: Math.round(p99) },
    statusCodes: { '200': Math.round(requestsPerSecond * 8) },
    errors: 0,
    timeouts: 0,
    invalidBodies: 0,
  };
}

const loaded = (gateway: PhaseResult): OutsideLoad => ({
  id: 'json-c32',
  connections: 32,
  streamed: false,
  bare: result('bare', 4000, 8, 18),
  committing: result('committing', 3000, 10, 20),
  gateway,
  roundRatios: [gateway.requestsPerSecond / 4000],
});

const unloaded = (warmMean: number, coldMean: number, committing = true): OutsideLoad => ({
  id: 'json-c1',
  connections: 1,
  streamed: false,
  bare: result('bare', 2500, 0.4, 0.9),
  ...(committing ? { committing: result('committing', 1000, 1.0, 2) } : {}),
  gateway: result('gateway', 1000, warmMean, 3),
  cold: result('gateway', 500, coldMean, 5),
  roundRatios: [0.4],
});

const verdicts = (load: OutsideLoad) => outsideTargets([load]).map((t) => [t.target, t.met]);

test('at 32 connections: at least 40% of the bare req/s, and a p99 at most three times the bare one', () => {
  expect(verdicts(loaded(result('gateway', 1600, 20, 54)))).toEqual([
    ['gateway req/s / bare', true],
    ["gateway p99 / bare's", true],
  ]);
  expect(verdicts(loaded(result('gateway', 1500, 22, 84)))).toEqual([
    ['gateway req/s / bare', false],
    ["gateway p99 / bare's", false],
  ]);
});

test("at one connection: warm keys at most 0.5 ms over bare, cold keys at most that plus the committing pass-through's own", () => {
  // The committing pass-through is 0.6 ms over bare: cold keys may be up to 1.1 ms over it.
  expect(verdicts(unloaded(0.9, 1.5))).toEqual([
    ['warm keys: mean over bare', true],
    ['cold keys: mean over bare', true],
  ]);
  expect(verdicts(unloaded(1.0, 4.4))).toEqual([
    ['warm keys: mean over bare', false],
    ['cold keys: mean over bare', false],
  ]);
});

test('without a committing pass-through (the embedded store) the cold target is reported as not measurable, not as met', () => {
  const load = unloaded(0.9, 1.5, false);
  expect(verdicts(load)).toEqual([
    ['warm keys: mean over bare', true],
    ['cold keys: mean over bare', null],
  ]);
  const report: OutsideResult = {
    date: '2026-12-03T00:00:00.000Z',
    environment: { node: 'v20', cpu: 'test × 2', database: 'pglite', redis: false },
    settings: { keys: 1000, accounts: 100, secondsPerLoad: 8, warmUpSeconds: 2, rounds: 3, connections: 32, leaseIdleSeconds: 10 },
    loads: [load],
    targets: outsideTargets([load]),
    money: [],
    totalSeconds: 1,
  };
  const md = renderOutsideMarkdown(report);
  expect(md).toContain('| json-c1 | cold keys: mean over bare | +1.10 ms |');
  expect(md).toContain('not measurable here');
  expect(md).toContain('set for PostgreSQL + Redis');
});
