/**
 * The writer of uncharged rows: written in batches on the clock (never when added), bounded
 * (past the bound new rows are dropped and reported), a failed batch kept for the next pass, and
 * what waits written at stop.
 */
import { RequestLogWriter } from '../../../src/domain/requests/request-log-writer';
import type { RequestLogRow } from '../../../src/domain/requests/call-log';
import { fakeClock } from '../../support/fake-clock';
import { databaseTooSlow } from '../../../src/domain/errors/domain-error';

const row = (n: number) => ({ id: `req_${n}` }) as RequestLogRow;

function setUp(options: { maxRows?: number; batchRows?: number } = {}) {
  const clock = fakeClock();
  const inserts: string[][] = [];
  const repo = {
    down: false,
    refuses: false,
    insert: async (rows: readonly RequestLogRow[]) => {
      if (repo.down) throw databaseTooSlow();
      if (repo.refuses) throw new Error('invalid input syntax');
      inserts.push(rows.map((r) => r.id));
    },
  };
  const errors: unknown[] = [];
  const dropped: number[] = [];
  const writer = new RequestLogWriter(repo, { clock, flushMs: 1000, onError: (e) => errors.push(e), onDropped: (n) => dropped.push(n), ...options });
  writer.start();
  return { clock, inserts, repo, errors, dropped, writer };
}

test('rows are written on the clock, in batches, never as they are added', async () => {
  const { clock, inserts, writer } = setUp({ batchRows: 2 });
  for (let i = 1; i <= 5; i++) writer.add(row(i));
  expect(inserts).toEqual([]);
  await clock.tickAsync(999);
  expect(inserts).toEqual([]);
  await clock.tickAsync(1);
  expect(inserts).toEqual([['req_1', 'req_2'], ['req_3', 'req_4'], ['req_5']]);
  expect(writer.waiting).toBe(0);
});

test('a batch the database refuses waits for the next pass, in order', async () => {
  const { clock, inserts, repo, errors, writer } = setUp();
  repo.down = true;
  writer.add(row(1));
  await clock.tickAsync(1000);
  expect(errors).toHaveLength(1);
  writer.add(row(2));
  repo.down = false;
  await clock.tickAsync(1000);
  expect(inserts).toEqual([['req_1', 'req_2']]);
});

test('a batch the database answered with an error is dropped and counted, not tried for ever', async () => {
  const { clock, inserts, repo, errors, dropped, writer } = setUp();
  repo.refuses = true;
  writer.add(row(1));
  await clock.tickAsync(1000);
  repo.refuses = false;
  writer.add(row(2));
  await clock.tickAsync(1000);
  expect(errors).toHaveLength(1);
  expect(dropped).toEqual([1]);
  expect(inserts).toEqual([['req_2']]);
});

test('past its bound the writer drops new rows and says how many', async () => {
  const { clock, inserts, dropped, writer } = setUp({ maxRows: 3 });
  for (let i = 1; i <= 5; i++) writer.add(row(i));
  expect(writer.waiting).toBe(3);
  await clock.tickAsync(1000);
  expect(dropped).toEqual([2]);
  expect(inserts).toEqual([['req_1', 'req_2', 'req_3']]);
});

test('stop writes what waits and ends the timer', async () => {
  const { clock, inserts, writer } = setUp();
  writer.add(row(1));
  await writer.stop();
  expect(inserts).toEqual([['req_1']]);
  expect(clock.armed()).toEqual([]);
});
