/** The partitions' upkeep: a pass at start and every hour, each for the clock's UTC day; none after stop. */
import { PARTITION_DAYS_AHEAD, PARTITION_UPKEEP_MS, RequestLogUpkeep } from '../../../src/domain/requests/request-log-upkeep';
import { fakeClock } from '../../support/fake-clock';

test('a pass at start, one each hour for the day the clock says, none once stopped', async () => {
  const clock = fakeClock();
  const passes: Array<[string, number, number]> = [];
  const upkeep = new RequestLogUpkeep(
    { keepPartitions: async (today, ahead, keep) => (passes.push([today, ahead, keep]), { made: 0, dropped: 0, moved: 0 }) },
    clock,
    30,
    (err) => {
      throw err;
    },
  );
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  await upkeep.start();
  expect(passes).toEqual([[day(clock.now()), PARTITION_DAYS_AHEAD, 30]]);
  clock.stepWall(86_400_000);
  await clock.tickAsync(PARTITION_UPKEEP_MS);
  expect(passes.at(-1)).toEqual([day(clock.now()), PARTITION_DAYS_AHEAD, 30]);
  expect(passes).toHaveLength(2);
  upkeep.stop();
  await clock.tickAsync(PARTITION_UPKEEP_MS * 3);
  expect(passes).toHaveLength(2);
});
