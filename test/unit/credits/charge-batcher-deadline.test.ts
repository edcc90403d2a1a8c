/**
 * The charge batcher against a database that stops answering: a batch is given up on after the
 * deadline, and the charges queued behind it with it, not one deadline after another. The
 * deadline runs on a fake clock the test steps.
 */
import { ChargeBatcher } from '../../../src/domain/credits/charge-batcher';
import { fakeClock } from '../../support/fake-clock';
import type { ChargeOutcome, ChargeRow, LeaseStore } from '../../../src/domain/credits/lease-store';

const row = (n: number): ChargeRow => ({
  requestId: `chatcmpl-${n}`,
  leaseId: 'lease_a',
  accountId: 'acct_1',
  keyId: 'key_1',
  model: null,
  leaseMicro: n,
  excessMicro: 0,
});

/** A store whose transactions hang while `stalled`, and answer at once otherwise. */
function store() {
  const s = {
    stalled: true,
    transactions: 0,
    record: (rows: readonly ChargeRow[]): Promise<ChargeOutcome[]> => {
      s.transactions++;
      if (s.stalled) return new Promise(() => undefined);
      return Promise.resolve(rows.map((r) => ({ requestId: r.requestId, status: 0, chargedMicro: r.leaseMicro })));
    },
  };
  return s;
}

const DEADLINE_MS = 300;

test('a stalled transaction fails its charges after the deadline, and those queued behind it at the same moment', async () => {
  const s = store();
  const clock = fakeClock();
  const batcher = new ChargeBatcher(s as unknown as LeaseStore, 0, 1, DEADLINE_MS, clock);
  const first = batcher.record(row(1));
  // These arrive while the first transaction hangs: they queue behind it.
  const queued = Array.from({ length: 9 }, (_, i) => batcher.record(row(i + 2)));
  let failed = 0;
  for (const p of [first, ...queued]) p.catch(() => failed++);
  const all = Promise.allSettled([first, ...queued]);
  // One deadline, not one per batch: just before it nothing has failed, at it every charge has.
  await clock.tickAsync(DEADLINE_MS - 1);
  expect(failed).toBe(0);
  await clock.tickAsync(1);
  expect(failed).toBe(10);
  const settled = await all;
  expect(settled.map((r) => r.status)).toEqual(Array(10).fill('rejected'));
  expect(String((settled[9] as PromiseRejectedResult).reason)).toMatch(new RegExp(`did not answer within ${DEADLINE_MS} ms`));
  // No second deadline is waiting for the queued ones.
  expect(clock.armed()).toEqual([]);
  expect(s.transactions).toBe(1);

  // The database answers again: charges go through.
  s.stalled = false;
  await expect(batcher.record(row(20))).resolves.toEqual({ requestId: 'chatcmpl-20', status: 0, chargedMicro: 20 });
});

test('without a deadline (0) a slow transaction is waited for', async () => {
  let answer!: () => void;
  const slow = {
    record: (rows: readonly ChargeRow[]) =>
      new Promise<ChargeOutcome[]>((resolve) => (answer = () => resolve(rows.map((r) => ({ requestId: r.requestId, status: 0, chargedMicro: r.leaseMicro }))))),
  };
  const clock = fakeClock();
  const batcher = new ChargeBatcher(slow as unknown as LeaseStore, 0, 1, 0, clock);
  let settled = false;
  const pending = batcher.record(row(1)).finally(() => (settled = true));
  // However long it takes (an hour here), no deadline gives up on it.
  expect(clock.armed()).toEqual([]);
  await clock.tickAsync(3_600_000);
  expect(settled).toBe(false);
  answer();
  await expect(pending).resolves.toMatchObject({ status: 0 });
});
