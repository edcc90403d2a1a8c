/**
 * `key.expiring`'s notices over in-memory fakes, the fake database's clock and the service's
 * stepped together: a row per notice still ahead of the expiry, due at its moment; a row that
 * comes due records its event once, and only while the key is unrevoked, still expires at the
 * moment the row was written for, and the next notice's moment has not come.
 */
import { KeyExpiryNotices } from '../../../src/domain/keys/key-expiry-notices';
import type { ApiKey } from '../../../src/domain/keys/key-record';
import type { SqlExecutor } from '../../../src/domain/ports/database';
import { FakeDatabase } from '../../support/fakes/fake-database';
import { FakeKeyRepository } from '../../support/fakes/fake-key-repository';
import { FakeWebhookRepository } from '../../support/fakes/fake-webhooks';
import { FakeWorkQueue } from '../../support/fakes/fake-work-queue';
import { fakeClock } from '../../support/fake-clock';

const DAY = 86_400;
const NO_SQL = {} as SqlExecutor;

function setUp() {
  const clock = fakeClock();
  const db = new FakeDatabase();
  db.nowMs = clock.now();
  const queue = new FakeWorkQueue(db);
  const keys = new FakeKeyRepository();
  const webhooks = new FakeWebhookRepository(db);
  const notices = new KeyExpiryNotices(queue, keys, webhooks, clock);
  /** Both clocks `seconds` on. */
  const pass = (seconds: number) => {
    db.advanceSeconds(seconds);
    clock.stepWall(seconds * 1000);
  };
  const inDays = (days: number) => new Date(clock.now() + days * DAY * 1000);
  const newKey = async (expiresAt: Date | null): Promise<ApiKey> => {
    const key = await keys.insert(NO_SQL, {
      id: `svc_live_${Math.random().toString(36).slice(2, 14)}`,
      accountId: 'acct_a',
      name: 'deploy key',
      mode: 'live',
      secretHash: `h_${Math.random()}`,
      allowedModels: null,
      blockedModels: null,
      dailySpendCapMicro: null,
      weekBudgetMicro: null,
      monthBudgetMicro: null,
      expiresAt,
    });
    await db.transaction((tx) => notices.schedule(tx, key));
    return key;
  };
  /** Runs every key_expiring row due now, as the worker would. */
  const runDue = async () => {
    for (const item of await queue.claim(100)) if (item.kind === 'key_expiring') await notices.handle(item);
  };
  const events = () => [...webhooks.accountEvents.rows.entries()].map(([id, e]) => ({ id, ...e }));
  return { db, queue, keys, notices, pass, inDays, newKey, runDue, events };
}

test('a key expiring in 10 days gets two rows, due 7 days and 1 day before; each sends its event once, at its moment', async () => {
  const { queue, pass, inDays, newKey, runDue, events } = setUp();
  const expiresAt = inDays(10);
  const key = await newKey(expiresAt);
  const at = expiresAt.toISOString();
  expect(queue.rows('key_expiring').map((r) => [r.ref, Math.round(r.dueInSeconds)])).toEqual([
    [`${key.id}/${at}/7`, 3 * DAY],
    [`${key.id}/${at}/1`, 9 * DAY],
  ]);
  pass(3 * DAY - 1);
  await runDue();
  expect(events()).toEqual([]);
  pass(1);
  await runDue();
  expect(events()).toEqual([
    {
      id: expect.any(String),
      accountId: 'acct_a',
      type: 'key.expiring',
      occurrence: `${key.id}/${at}/7`,
      data: { keyId: key.id, name: 'deploy key', expiresAt: at, days: 7 },
    },
  ]);
  expect(queue.rows('key_expiring')).toHaveLength(1);
  pass(6 * DAY);
  await runDue();
  expect(events().map((e) => [e.occurrence, e.data.days])).toEqual([
    [`${key.id}/${at}/7`, 7],
    [`${key.id}/${at}/1`, 1],
  ]);
  expect(queue.rows('key_expiring')).toEqual([]);
});

test('only the notices still ahead are written: 3 days out, the 1-day one; 12 hours out or without an expiry, none', async () => {
  const { queue, inDays, newKey } = setUp();
  const soon = await newKey(inDays(3));
  expect(queue.rows('key_expiring').map((r) => [r.ref, Math.round(r.dueInSeconds)])).toEqual([[`${soon.id}/${soon.expiresAt!.toISOString()}/1`, 2 * DAY]]);
  await newKey(inDays(0.5));
  await newKey(null);
  expect(queue.rows('key_expiring')).toHaveLength(1);
});

test('the same occurrence written again and run again records one event', async () => {
  const { db, queue, notices, pass, inDays, newKey, runDue, events } = setUp();
  const key = await newKey(inDays(10));
  pass(3 * DAY);
  await runDue();
  // The owner sends the same expiresAt again: the rows still ahead are written again; the 7-day one's moment has passed.
  await db.transaction((tx) => notices.schedule(tx, key));
  expect(queue.rows('key_expiring').map((r) => r.payload.days)).toEqual([1]);
  // A row run twice (a second claim after a lost lease) records nothing new.
  const item = { id: 99, kind: 'key_expiring' as const, ref: 'x', attempts: 1, dueAt: new Date(), payload: { ...queue.rows()[0].payload, days: 7 } };
  await notices.handle(item);
  expect(events().map((e) => e.data.days)).toEqual([7]);
});

test('a changed, cleared or revoked expiry, a notice late past the next one and one after the expiry send nothing', async () => {
  const { keys, queue, pass, inDays, newKey, runDue, events } = setUp();
  const changed = await newKey(inDays(10));
  await keys.update('acct_a', changed.id, { expiresAt: inDays(20) });
  const cleared = await newKey(inDays(10));
  await keys.update('acct_a', cleared.id, { expiresAt: null });
  const revoked = await newKey(inDays(10));
  await keys.revoke('acct_a', revoked.id);
  pass(3 * DAY);
  await runDue();
  expect(events()).toEqual([]);
  expect(queue.rows('key_expiring').map((r) => r.payload.days)).toEqual([1, 1, 1]);

  // The worker away until half a day before the expiry: the 7-day notice is late past the 1-day one's moment.
  const late = await newKey(inDays(10));
  pass(9.5 * DAY);
  const [sevenDay] = queue.rows('key_expiring').filter((r) => r.payload.keyId === late.id);
  expect(sevenDay.payload.days).toBe(7);
  await runDue();
  expect(events().map((e) => [e.data.keyId, e.data.days])).toEqual([[late.id, 1]]);
  // Past the expiry itself: nothing, and no row is left.
  const gone = await newKey(inDays(2));
  pass(3 * DAY);
  await runDue();
  expect(events().filter((e) => e.data.keyId === gone.id)).toEqual([]);
  expect(queue.rows('key_expiring')).toEqual([]);
});
