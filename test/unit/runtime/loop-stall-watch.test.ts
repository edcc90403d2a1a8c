/** The event-loop stall watch behind /livez, on a clock the test steps and stalls. */
import { LoopStallWatch, STALL_HOLD_MS } from '../../../src/infra/runtime/loop-stall-watch';
import { fakeClock } from '../../support/fake-clock';

test('a loop that turns is not stalled, however long it runs', async () => {
  const clock = fakeClock();
  const watch = new LoopStallWatch(clock, 10_000);
  watch.start();
  await clock.tickAsync(10 * 60_000);
  expect(watch.stalled()).toBeUndefined();
  watch.stop();
});

test('a stall past the bound is held for a minute, then forgotten; one within it never counts', async () => {
  const clock = fakeClock();
  const watch = new LoopStallWatch(clock, 10_000);
  watch.start();
  await clock.tickAsync(2_000);
  clock.stall(9_000);
  await clock.tickAsync(1_000);
  expect(watch.stalled()).toBeUndefined();

  clock.stall(12_000);
  const stall = watch.stalled();
  expect(stall).toEqual({ stallMs: expect.any(Number), agoMs: 0 });
  expect(stall!.stallMs).toBeGreaterThan(10_000);
  expect(stall!.stallMs).toBeLessThanOrEqual(12_000);
  await clock.tickAsync(STALL_HOLD_MS - 1_000);
  expect(watch.stalled()).toMatchObject({ agoMs: STALL_HOLD_MS - 1_000 });
  await clock.tickAsync(1_000);
  expect(watch.stalled()).toBeUndefined();
  watch.stop();
});

test('a bound of 0 watches nothing and arms no timer', () => {
  const clock = fakeClock();
  const watch = new LoopStallWatch(clock, 0);
  watch.start();
  expect(clock.armed()).toEqual([]);
  clock.stall(60_000);
  expect(watch.stalled()).toBeUndefined();
});
