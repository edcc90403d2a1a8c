/**
 * The charge journal on disk: what is appended is recorded by the next replay and then gone; a
 * failed recording keeps it; a file another instance left behind is taken over only once it has
 * been untouched long enough, and read only after it rests; a torn line is skipped and reported.
 * Where a file's age matters, the journals read time from a fake clock the test steps.
 */
import { appendFileSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileChargeJournal } from '../../../src/infra/credits/file-charge-journal';
import type { ChargeOutcome, ChargeRow } from '../../../src/domain/credits/lease-store';
import { fakeClock } from '../../support/fake-clock';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'charge-journal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const row = (n: number, leaseId = 'lease_a'): ChargeRow => ({
  requestId: `chatcmpl-${n}`,
  leaseId,
  accountId: 'acct_1',
  keyId: 'key_1',
  model: 'svc-chat-1',
  leaseMicro: 100 * n,
  excessMicro: n,
});

/** A recorder that keeps what it was given and answers as the database does (status 0 each). */
function recorder() {
  const seen: ChargeRow[] = [];
  const record = async (rows: ChargeRow[]): Promise<ChargeOutcome[]> => {
    seen.push(...rows);
    return rows.map((r) => ({ requestId: r.requestId, status: 0, chargedMicro: r.leaseMicro + r.excessMicro }));
  };
  return { seen, record };
}

const journal = (instanceId: string, extra: Partial<ConstructorParameters<typeof FileChargeJournal>[0]> = {}) =>
  new FileChargeJournal({ dir, instanceId, adoptAfterMs: 30_000, settleMs: 0, ...extra });

test('appended charges are recorded by the next replay, exactly as written, and the file is gone', async () => {
  const j = journal('inst_a');
  j.append(row(1));
  j.append(row(2));
  const { seen, record } = recorder();
  expect(await j.replay(record)).toBe(2);
  expect(seen).toEqual([row(1), row(2)]);
  expect(readdirSync(dir)).toEqual([]);
  expect(await j.replay(record)).toBe(0);
  expect(seen).toHaveLength(2);
});

test('a replay whose recording fails keeps every charge for the next one; appends meanwhile join them', async () => {
  const j = journal('inst_a');
  j.append(row(1));
  await expect(j.replay(async () => Promise.reject(new Error('connection refused')))).rejects.toThrow('connection refused');
  j.append(row(2));
  const { seen, record } = recorder();
  expect(await j.replay(record)).toBe(2);
  expect(seen.map((r) => r.requestId).sort()).toEqual(['chatcmpl-1', 'chatcmpl-2']);
  expect(readdirSync(dir)).toEqual([]);
});

test('charges the database refuses (status 1) are not counted as recorded, and not kept either', async () => {
  const j = journal('inst_a');
  j.append(row(1));
  j.append(row(2));
  const refused = async (rows: ChargeRow[]) => rows.map((r, i) => ({ requestId: r.requestId, status: i === 0 ? 1 : 0, chargedMicro: 0 }));
  expect(await j.replay(refused)).toBe(1);
  expect(readdirSync(dir)).toEqual([]);
});

test("another instance's file is taken over only when untouched for adoptAfterMs, and read only after it rests", async () => {
  const clock = fakeClock();
  const dead = journal('inst_dead', { clock });
  dead.append(row(7));
  const live = journal('inst_live', { adoptAfterMs: 60_000, settleMs: 50, clock });
  const { seen, record } = recorder();
  // Touched just now: its instance may be alive and appending.
  expect(await live.replay(record)).toBe(0);
  expect(readdirSync(dir)).toEqual(['inst_dead.jsonl']);
  // Untouched for two minutes: taken over (renamed), but not read in the same pass.
  const old = (Date.now() - 120_000) / 1000;
  utimesSync(join(dir, 'inst_dead.jsonl'), old, old);
  expect(await live.replay(record)).toBe(0);
  expect(readdirSync(dir)).toEqual([expect.stringMatching(/^inst_live\.\d+\.adopted-\d+$/)]);
  await clock.tickAsync(49);
  expect(await live.replay(record)).toBe(0);
  await clock.tickAsync(1);
  expect(await live.replay(record)).toBe(1);
  expect(seen).toEqual([row(7)]);
  expect(readdirSync(dir)).toEqual([]);
});

test('a file a crashed instance had claimed (renamed, not yet recorded) is taken over once its claim is old', async () => {
  // Its claim is 10 s old: the instance may still be recording it.
  writeFileSync(join(dir, `inst_gone.3.claimed-${Date.now() - 10_000}`), `${JSON.stringify(row(3))}\n`);
  const { seen, record } = recorder();
  await journal('inst_b').replay(record);
  expect(seen).toEqual([]);
  // Claimed two minutes ago and still there: its instance is gone.
  rmSync(join(dir, readdirSync(dir)[0]));
  writeFileSync(join(dir, `inst_gone.3.claimed-${Date.now() - 120_000}`), `${JSON.stringify(row(3))}\n`);
  const j = journal('inst_b');
  await j.replay(record);
  await j.replay(record);
  expect(seen).toEqual([row(3)]);
  expect(readdirSync(dir)).toEqual([]);
});

test('a torn last line (a crash mid-write) is skipped and reported; the whole lines are recorded', async () => {
  const j = journal('inst_a');
  j.append(row(1));
  appendFileSync(join(dir, 'inst_a.jsonl'), '{"requestId":"chatcmpl-2","leaseId":"lea');
  const reports: Array<[string, number]> = [];
  const { seen, record } = recorder();
  const again = journal('inst_a', { onUnreadable: (file, lines) => reports.push([file, lines]) });
  expect(await again.replay(record)).toBe(1);
  expect(seen).toEqual([row(1)]);
  expect(reports).toEqual([[expect.stringMatching(/^inst_a\.\d+\.claimed-\d+$/), 1]]);
});

test('files that are not journal files are left alone', async () => {
  writeFileSync(join(dir, 'README'), 'not a journal');
  const old = (Date.now() - 120_000) / 1000;
  utimesSync(join(dir, 'README'), old, old);
  const { record } = recorder();
  expect(await journal('inst_a').replay(record)).toBe(0);
  expect(readdirSync(dir)).toEqual(['README']);
});

test('two live instances on one directory do not pass a file back and forth: the one that took it over records it', async () => {
  const clock = fakeClock();
  const a = journal('inst_a', { adoptAfterMs: 1_000, settleMs: 0, clock });
  const b = journal('inst_b', { adoptAfterMs: 1_000, settleMs: 0, clock });
  // inst_a kept a charge while the database was away, then claimed it, and could not record it.
  a.append(row(9));
  await expect(a.replay(async () => Promise.reject(new Error('database away')))).rejects.toThrow();
  const [claimed] = readdirSync(dir);
  expect(claimed).toMatch(/^inst_a\.\d+\.claimed-\d+$/);
  // An old modification time (the rename kept the one of the last append) does not make it abandoned.
  const old = (Date.now() - 120_000) / 1000;
  utimesSync(join(dir, claimed), old, old);
  const fromB = recorder();
  expect(await b.replay(fromB.record)).toBe(0);
  expect(readdirSync(dir)).toEqual([claimed]);
  // Its claim one second old: inst_b takes it over; inst_a, right after, finds it too fresh to take back.
  await clock.tickAsync(1_000);
  await b.replay(fromB.record);
  const fromA = recorder();
  await a.replay(fromA.record);
  expect(fromA.seen).toEqual([]);
  await b.replay(fromB.record);
  expect(fromB.seen).toEqual([row(9)]);
  expect(readdirSync(dir)).toEqual([]);
});
