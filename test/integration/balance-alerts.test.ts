/**
 * balance.low where the money moves, on a real database (PGlite, or PostgreSQL in CI's second
 * pass, where the charges below commit concurrently): one event per crossing whatever the number
 * of instances charging at once, video charges and their refunds, operator removals, and the
 * account events' outbox the other account events go through.
 */
import { startTestServices, type AccountRef, type TestServices } from '../support/test-services';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { Billing } from '../../src/domain/credits/billing';
import { ChargeBatcher } from '../../src/domain/credits/charge-batcher';
import { LeaseBook } from '../../src/domain/credits/lease-book';
import { SqlLeaseStore } from '../../src/infra/db/repositories/sql-lease-store';
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';
import type { KeyPrincipal } from '../../src/domain/keys/principal';
import { NO_BUDGETS } from '../../src/domain/credits/budgets';
import { creditsToMicro } from '../../src/domain/shared/money';

let gw: TestServices;
const books: LeaseBook[] = [];
beforeAll(async () => {
  gw = await startTestServices({ WORKER_CONCURRENCY: '0' });
});
afterAll(async () => {
  for (const book of books) await book.stop();
  try {
    await expectLedgerInvariants(gw.database.db);
  } finally {
    await gw.close();
  }
});

const db = () => gw.database.db;
const recalls = new LocalTopicFeed();

/** An instance's credit leases and charges: its own lease book, charge transactions two at a time. */
function instance(name: string): Billing {
  const store = new SqlLeaseStore(db(), gw.database.hot);
  const book = new LeaseBook(store, new ChargeBatcher(store, 0, 2), recalls, {
    instanceId: `inst_${name}_${Math.random().toString(36).slice(2)}`,
    idleMs: 60_000,
    heartbeatMs: 60_000,
    graceSeconds: 600,
    wantFactor: 32,
    minWantMicro: creditsToMicro(1),
  });
  books.push(book);
  return new Billing(book);
}

async function alertedAccount(credits: number, lowBalanceAlert: number): Promise<{ acct: AccountRef; key: KeyPrincipal }> {
  const acct = await gw.newAccount(credits);
  await gw.services.accounts.update(acct.id, { lowBalanceAlert });
  await gw.services.accountWebhook.configure(acct.id, { url: 'https://hooks.example.com/in' });
  const { id } = await gw.newKey(acct);
  return { acct, key: { kind: 'key', keyId: id, accountId: acct.id, mode: 'live', allowedModels: null, blockedModels: null, budgets: NO_BUDGETS } };
}

/** The account's events, oldest first, with their deliveries' work rows. */
const eventsOf = async (acct: AccountRef) =>
  (
    await db().all<{ id: string; type: string; occurrence: string; data: any; deliveries: string }>(
      `select e.id, e.type, e.occurrence, e.data,
              (select count(*) from work_items w where w.kind = 'webhook_delivery' and w.payload->>'eventId' = e.id) as deliveries
         from account_events e where e.account_id = ? order by e.created_at, e.occurrence`,
      [acct.id],
    )
  ).map((e) => ({ ...e, data: typeof e.data === 'string' ? JSON.parse(e.data) : e.data, deliveries: Number(e.deliveries) }));

test('two instances charging one account at once make one balance.low, with the balance the crossing left', async () => {
  const { acct, key } = await alertedAccount(40, 30);
  const [a, b] = [instance('a'), instance('b')];
  let n = 0;
  const call = async (billing: Billing) => {
    const hold = await billing.hold(key, creditsToMicro(1), 'svc-creative-v8', `img_alert_${acct.id}_${n++}`);
    await billing.settle(hold, creditsToMicro(1));
  };
  await Promise.all(Array.from({ length: 16 }, (_, i) => call(i % 2 === 0 ? a : b)));
  expect(await gw.balance(acct)).toBe(24);
  const events = await eventsOf(acct);
  expect(events).toEqual([{ id: expect.stringMatching(/^evt_[0-9a-f]{32}$/), type: 'balance.low', occurrence: '1', data: expect.any(Object), deliveries: 1 }]);
  expect(events[0].data).toEqual({ accountId: acct.id, balance: expect.any(Number), lowBalanceAlert: 30 });
  expect(events[0].data.balance).toBeLessThan(30);
  expect(events[0].data.balance).toBeGreaterThanOrEqual(24);
});

test("a video's charge sets it off, its refund arms it again, the next charge sets it off anew; an operator's removal does too", async () => {
  const { acct, key } = await alertedAccount(25, 20);
  const charge = (reference: string) =>
    db().transaction((tx) =>
      gw.services.ledger.charge(tx, { accountId: acct.id, key: { id: key.keyId, budgets: NO_BUDGETS }, amountMicro: creditsToMicro(10), reference }),
    );
  await charge('vid_alert_1');
  expect((await eventsOf(acct)).map((e) => [e.occurrence, e.data.balance])).toEqual([['1', 15]]);
  await db().transaction((tx) => gw.services.ledger.refundOnce(tx, { accountId: acct.id, reference: 'vid_alert_1', reason: 'video job failed' }));
  expect(await gw.balance(acct)).toBe(25);
  await charge('vid_alert_2');
  expect((await eventsOf(acct)).map((e) => [e.occurrence, e.data.balance])).toEqual([
    ['1', 15],
    ['2', 15],
  ]);
  // Below already: a removal that takes it lower tells nothing new; one after a grant above does.
  await gw.services.accounts.adjustCredits(acct.id, { credits: -1, reason: 'correction' });
  await gw.services.accounts.adjustCredits(acct.id, { credits: 10, reason: 'top-up' });
  await gw.services.accounts.adjustCredits(acct.id, { credits: -4.5, reason: 'correction' });
  expect((await eventsOf(acct)).map((e) => [e.occurrence, e.data.balance])).toEqual([
    ['1', 15],
    ['2', 15],
    ['3', 19.5],
  ]);
});

test('the outbox records an occurrence once, whoever records it again, and schedules its delivery only where a webhook is', async () => {
  const { acct } = await alertedAccount(1, 0.5);
  const event = { accountId: acct.id, type: 'key.expiring' as const, occurrence: 'svc_live_x/1767225600/7', data: { keyId: 'svc_live_x', days: 7 } };
  const webhooks = gw.services.webhooks;
  const first = await db().transaction((tx) => webhooks.recordAccountEvent(tx, event));
  expect(first).toMatch(/^evt_/);
  expect(await db().transaction((tx) => webhooks.recordAccountEvent(tx, event))).toBeNull();
  const [row] = await eventsOf(acct);
  expect(row).toMatchObject({ id: first, type: 'key.expiring', data: event.data, deliveries: 1 });
  const work = await db().one<{ payload: any }>(`select payload from work_items where kind = 'webhook_delivery' and payload->>'eventId' = ?`, [first]);
  const payload = typeof work!.payload === 'string' ? JSON.parse(work!.payload) : work!.payload;
  expect(payload).toMatchObject({ event: 'key.expiring', accountId: acct.id, keyId: null, jobId: null, url: 'https://hooks.example.com/in', attempt: 1 });
  expect(JSON.parse(payload.body)).toEqual({ id: first, type: 'key.expiring', created: expect.any(Number), data: event.data });

  const bare = await gw.newAccount();
  const unsent = await db().transaction((tx) => webhooks.recordAccountEvent(tx, { ...event, accountId: bare.id }));
  expect(unsent).toMatch(/^evt_/);
  expect(unsent).not.toBe(first);
  expect(await eventsOf(bare)).toEqual([expect.objectContaining({ id: unsent, deliveries: 0 })]);
});
