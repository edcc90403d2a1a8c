import { sharedProbe } from '../../../src/infra/health/shared-probe';

/** A probe that answers when told to, counting how often it ran. */
function controlledProbe() {
  const pending: Array<(up: boolean) => void> = [];
  return {
    runs: () => pending.length,
    answer: (up: boolean) => pending.at(-1)!(up),
    probe: () => new Promise<boolean>((resolve) => pending.push(resolve)),
  };
}

test('a hundred concurrent health checks run one probe and all get its answer', async () => {
  const p = controlledProbe();
  const check = sharedProbe(p.probe, 250);
  const answers = Array.from({ length: 100 }, () => check());
  expect(p.runs()).toBe(1);
  p.answer(true);
  expect(await Promise.all(answers)).toEqual(Array(100).fill(true));
});

test('the answer stands for its interval, then the next check probes again and sees a change', async () => {
  let clock = 1_000;
  const p = controlledProbe();
  const check = sharedProbe(p.probe, 250, () => clock);
  const first = check();
  p.answer(true);
  expect(await first).toBe(true);
  clock += 249;
  expect(await check()).toBe(true);
  expect(p.runs()).toBe(1);
  clock += 1;
  const second = check();
  expect(p.runs()).toBe(2);
  p.answer(false);
  expect(await second).toBe(false);
  // A database found down stays reported down for the interval too, without a query per check.
  expect(await check()).toBe(false);
  expect(p.runs()).toBe(2);
});

test('a probe that throws is not cached: the next check probes again', async () => {
  let runs = 0;
  const check = sharedProbe(async () => {
    runs++;
    throw new Error('boom');
  }, 250);
  await expect(check()).rejects.toThrow('boom');
  await expect(check()).rejects.toThrow('boom');
  expect(runs).toBe(2);
});

test('an answer past its interval but within the stale bound is given at once while the next probe runs; past the bound, checks wait', async () => {
  let clock = 1_000;
  const p = controlledProbe();
  const check = sharedProbe(p.probe, 250, () => clock, 1_000);
  const first = check();
  p.answer(true);
  expect(await first).toBe(true);

  clock += 300;
  // Answered from the last probe without waiting; one fresh probe started behind it, shared.
  expect(await check()).toBe(true);
  expect(await check()).toBe(true);
  expect(p.runs()).toBe(2);
  p.answer(false);
  await new Promise((r) => setImmediate(r));
  expect(await check()).toBe(false);

  // Nothing for longer than the stale bound: the next check waits for a probe of its own.
  clock += 1_000;
  let settled = false;
  const late = check().then((up) => ((settled = true), up));
  await new Promise((r) => setImmediate(r));
  expect(settled).toBe(false);
  expect(p.runs()).toBe(3);
  p.answer(true);
  expect(await late).toBe(true);
});
