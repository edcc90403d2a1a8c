/**
 * The lease book over an in-memory lease store: what a caller of the billing path would check.
 * A call is charged its cost once, whether its charge is recorded at once, kept while the
 * database cannot take it, or recorded before by a run of the same call; a failed call is
 * charged nothing; a refusal names its true reason; credits leased by another instance are
 * recalled for a call that needs them. The SQL side of the same rules is
 * test/integration/credit-leases.test.ts and record-charges.test.ts.
 */
import { NO_BUDGETS } from '../../../src/domain/credits/budgets';
import { ChargeBatcher } from '../../../src/domain/credits/charge-batcher';
import { LeaseBook } from '../../../src/domain/credits/lease-book';
import type { KeyPrincipal } from '../../../src/domain/keys/principal';
import { creditsToMicro } from '../../../src/domain/shared/money';
import { LocalTopicFeed } from '../../../src/infra/events/local-topic-feed';
import { FakeLeaseStore } from '../../support/fakes/fake-lease-store';

const books: LeaseBook[] = [];
afterEach(async () => {
  await Promise.all(books.splice(0).map((b) => b.stop()));
});

function bookOn(store: FakeLeaseStore, recalls = new LocalTopicFeed(), instanceId = 'inst_a'): LeaseBook {
  const book = new LeaseBook(store, new ChargeBatcher(store), recalls, {
    instanceId,
    idleMs: 60_000,
    heartbeatMs: 60_000,
    graceSeconds: 30,
    wantFactor: 32,
    minWantMicro: creditsToMicro(1),
  });
  books.push(book);
  return book;
}

const liveKey = (accountId: string, keyId = `${accountId}_key`, dailySpendCapMicro: number | null = null): KeyPrincipal => ({
  kind: 'key',
  keyId,
  accountId,
  mode: 'live',
  allowedModels: null,
  blockedModels: null,
  budgets: { ...NO_BUDGETS, day: dailySpendCapMicro },
});

/** A store holding one account with `credits`. */
function storeWith(credits: number, accountId = 'acct_a'): FakeLeaseStore {
  const store = new FakeLeaseStore();
  store.grant(accountId, creditsToMicro(credits));
  return store;
}

test('a call reserved from a lease and committed is charged its cost once; the rest of the lease goes back', async () => {
  const store = storeWith(10);
  const book = bookOn(store);
  const r = await book.reserve(liveKey('acct_a'), creditsToMicro(0.5));
  expect(await book.commit(r, creditsToMicro(0.3), 'chatcmpl-1', 'svc-chat-1')).toBe(creditsToMicro(0.3));
  expect([...store.charges.keys()]).toEqual(['chatcmpl-1']);
  await book.returnIdleNow();
  expect(await store.openOf('acct_a')).toBe(0);
  expect(store.balance('acct_a')).toBe(creditsToMicro(10 - 0.3));
  expect(book.inFlightFor('acct_a')).toBe(0);
});

test('a call that failed is charged nothing: its reservation is free again and the lease goes back whole', async () => {
  const store = storeWith(10);
  const book = bookOn(store);
  const r = await book.reserve(liveKey('acct_a'), creditsToMicro(0.5));
  book.release(r);
  await book.returnIdleNow();
  expect(store.charges.size).toBe(0);
  expect(store.balance('acct_a')).toBe(creditsToMicro(10));
});

test('a charge the database could not take is answered from the lease, kept, and recorded once when the database answers', async () => {
  const store = storeWith(10);
  const book = bookOn(store);
  const r = await book.reserve(liveKey('acct_a'), creditsToMicro(0.5));
  store.failRecords = 1;
  expect(await book.commit(r, creditsToMicro(0.2), 'chatcmpl-kept', 'svc-chat-1')).toBe(creditsToMicro(0.2));
  expect(store.charges.size).toBe(0);
  await book.recordKeptNow();
  await book.recordKeptNow();
  expect(await store.recordedCharge('chatcmpl-kept')).toBe(creditsToMicro(0.2));
  await book.returnIdleNow();
  expect(store.balance('acct_a')).toBe(creditsToMicro(10 - 0.2));
});

test('a lease the database lost (its take gone in a crash before its WAL was flushed) is let go: the call on it is paid from the balance, once, and the next call takes a lease the database holds', async () => {
  const store = storeWith(10);
  const book = bookOn(store);
  const key = liveKey('acct_a');
  const r = await book.reserve(key, creditsToMicro(0.5));
  store.loseTake(r.lease.id);
  expect(store.balance('acct_a')).toBe(creditsToMicro(10));
  expect(await book.commit(r, creditsToMicro(0.2), 'chatcmpl-lost', 'svc-chat-1')).toBe(creditsToMicro(0.2));
  expect(store.balance('acct_a')).toBe(creditsToMicro(9.8));
  const next = await book.reserve(key, creditsToMicro(0.5));
  expect(next.lease.id).not.toBe(r.lease.id);
  expect(store.leases.has(next.lease.id)).toBe(true);
  expect(await book.commit(next, creditsToMicro(0.3), 'chatcmpl-after', 'svc-chat-1')).toBe(creditsToMicro(0.3));
  await book.returnIdleNow();
  expect(store.balance('acct_a')).toBe(creditsToMicro(10 - 0.2 - 0.3));
  expect([...store.charges.keys()].sort()).toEqual(['chatcmpl-after', 'chatcmpl-lost']);
});

test('a call whose charge a run of the same call recorded answers that charge and is not charged again', async () => {
  const store = storeWith(10);
  const book = bookOn(store);
  const key = liveKey('acct_a');
  const first = await book.reserve(key, creditsToMicro(0.5));
  expect(await book.commit(first, creditsToMicro(0.4), 'chatcmpl-same', 'svc-chat-1')).toBe(creditsToMicro(0.4));
  const again = await book.reserve(key, creditsToMicro(0.5));
  expect(await book.commit(again, creditsToMicro(0.4), 'chatcmpl-same', 'svc-chat-1')).toBe(creditsToMicro(0.4));
  await book.returnIdleNow();
  expect(store.balance('acct_a')).toBe(creditsToMicro(10 - 0.4));
});

test('a balance that cannot cover the call, with no lease open anywhere, is refused as insufficient credits', async () => {
  const book = bookOn(storeWith(0.1));
  await expect(book.reserve(liveKey('acct_a'), creditsToMicro(0.5))).rejects.toMatchObject({ type: 'insufficient_credits', status: 402 });
});

test('a key whose daily cap its committed charges spent is refused with daily_cap_exceeded, to retry at midnight, though the balance is there', async () => {
  const store = storeWith(100);
  const book = bookOn(store);
  const key = liveKey('acct_a', 'key_capped', creditsToMicro(1));
  const r = await book.reserve(key, creditsToMicro(1));
  await book.commit(r, creditsToMicro(1), 'chatcmpl-spends-cap', 'svc-chat-1');
  await book.returnIdleNow();
  const refusal = book.reserve(key, creditsToMicro(0.1), new Date('2026-03-01T23:00:00Z'));
  await expect(refusal).rejects.toMatchObject({ type: 'daily_cap_exceeded', retryAfterSeconds: 3600 });
  expect(store.balance('acct_a')).toBe(creditsToMicro(99));
});

test('credits leased by another instance are recalled for a call the balance alone cannot fund, and the call is served', async () => {
  const store = storeWith(10);
  const recalls = new LocalTopicFeed();
  const here = bookOn(store, recalls, 'inst_here');
  const there = bookOn(store, recalls, 'inst_there');
  // The other instance's call leaves it an idle lease of 32 times its 0.1 credit.
  const theirs = await there.reserve(liveKey('acct_a', 'key_there'), creditsToMicro(0.1));
  await there.commit(theirs, creditsToMicro(0.1), 'chatcmpl-there', 'svc-chat-1');
  expect(await store.openOf('acct_a')).toBe(1);

  const mine = await here.reserve(liveKey('acct_a', 'key_here'), creditsToMicro(8));
  expect(mine.amountMicro).toBe(creditsToMicro(8));
  expect(await store.openElsewhere('inst_here', 'acct_a')).toBe(0);
  await here.commit(mine, creditsToMicro(8), 'chatcmpl-here', 'svc-chat-1');
  await here.returnIdleNow();
  expect(store.balance('acct_a')).toBe(creditsToMicro(10 - 0.1 - 8));
});
