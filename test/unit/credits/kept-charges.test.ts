/**
 * Charges kept while the database cannot take them: on disk through the journal, in memory when
 * the journal cannot be written; recorded once the database answers, and kept until then.
 */
import { KeptCharges } from '../../../src/domain/credits/kept-charges';
import type { ChargeJournal } from '../../../src/domain/credits/charge-journal';
import type { ChargeOutcome, ChargeRow } from '../../../src/domain/credits/lease-store';

const row = (n: number): ChargeRow => ({
  requestId: `chatcmpl-${n}`,
  leaseId: 'lease_a',
  accountId: 'acct_1',
  keyId: 'key_1',
  model: null,
  leaseMicro: n,
  excessMicro: 0,
});

/** A database that is away until `up` is set, and answers each charge as recorded (or refused). */
function database() {
  const recorded: ChargeRow[] = [];
  const db = {
    up: false,
    refuse: new Set<string>(),
    recorded,
    record: async (rows: readonly ChargeRow[]): Promise<ChargeOutcome[]> => {
      if (!db.up) throw new Error('connection refused');
      recorded.push(...rows);
      return rows.map((r) => ({ requestId: r.requestId, status: db.refuse.has(r.requestId) ? 1 : 0, chargedMicro: r.leaseMicro }));
    },
  };
  return db;
}

const brokenDisk: ChargeJournal = {
  append: () => {
    throw new Error('ENOSPC: no space left on device');
  },
  replay: async () => 0,
};

test('a journal that cannot be written: the charge is kept in memory, and recorded once the database answers', async () => {
  const db = database();
  const errors: string[] = [];
  const events: Array<[string, unknown]> = [];
  const kept = new KeptCharges(db, { journal: brokenDisk, onError: (what) => errors.push(what), onJournal: (e, d) => events.push([e, d.count]) });
  kept.keep(row(1), new Error('database away'));
  kept.keep(row(2), new Error('database away'));
  expect(errors).toEqual(['charge journal (kept in memory)', 'charge journal (kept in memory)']);
  await expect(kept.record()).rejects.toThrow('connection refused');
  expect(db.recorded).toEqual([]);
  db.up = true;
  await kept.record();
  expect(db.recorded).toEqual([row(1), row(2)]);
  expect(events).toEqual([['recorded', 2]]);
  // Nothing is recorded twice.
  await kept.record();
  expect(db.recorded).toHaveLength(2);
});

test("a charge the database refuses (its lease is another account's) is reported, not counted as recorded", async () => {
  const db = database();
  db.up = true;
  db.refuse.add('chatcmpl-3');
  const errors: unknown[] = [];
  const events: Array<[string, unknown]> = [];
  const kept = new KeptCharges(db, { onError: (_what, err) => errors.push(String(err)), onJournal: (e, d) => events.push([e, d.count]) });
  kept.keep(row(3), new Error('x'));
  kept.keep(row(4), new Error('x'));
  await kept.record();
  expect(errors.at(-1)).toMatch(/refused.*chatcmpl-3/);
  expect(events).toEqual([['recorded', 1]]);
});

test('passes do not overlap: a pass asked for while one runs is that pass', async () => {
  const db = database();
  db.up = true;
  let replays = 0;
  // A slow disk: the replay goes on until the test lets it finish, after the three asks.
  let finish!: () => void;
  const slowDisk = new Promise<void>((r) => (finish = r));
  const journal: ChargeJournal = {
    append: () => undefined,
    replay: async () => {
      replays++;
      await slowDisk;
      return 0;
    },
  };
  const kept = new KeptCharges(db, { journal });
  const passes = [kept.record(), kept.record(), kept.record()];
  finish();
  await Promise.all(passes);
  expect(replays).toBe(1);
});
