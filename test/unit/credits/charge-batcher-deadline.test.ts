/**
 * The charge batcher against a database that stops answering: a batch is given up on after the
 * deadline, and the charges queued behind it with it, not one deadline after another.
 */
import { ChargeBatcher } from '../../../src/domain/credits/charge-batcher';
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

/** Long enough that a timer running late on a loaded machine is small beside it. */
const DEADLINE_MS = 300;

test('a stalled transaction fails its charges after the deadline, and those queued behind it at the same moment', async () => {
  const s = store();
  const batcher = new ChargeBatcher(s as unknown as LeaseStore, 0, 1, DEADLINE_MS);
  const started = Date.now();
  const first = batcher.record(row(1));
  // These arrive while the first transaction hangs: they queue behind it.
  const queued = Array.from({ length: 9 }, (_, i) => batcher.record(row(i + 2)));
  const settled = await Promise.allSettled([first, ...queued]);
  const elapsed = Date.now() - started;
  expect(settled.map((r) => r.status)).toEqual(Array(10).fill('rejected'));
  expect(String((settled[9] as PromiseRejectedResult).reason)).toMatch(new RegExp(`did not answer within ${DEADLINE_MS} ms`));
  // One deadline, not one per batch (the queued ones would have waited two); the margin is wide
  // because a loaded machine runs timers late.
  expect(elapsed).toBeLessThan(DEADLINE_MS * 1.8);
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
  const batcher = new ChargeBatcher(slow as unknown as LeaseStore, 0, 1, 0);
  const pending = batcher.record(row(1));
  await new Promise((r) => setTimeout(r, 150));
  answer();
  await expect(pending).resolves.toMatchObject({ status: 0 });
});
