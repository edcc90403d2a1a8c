/**
 * The shortfall path's wait for recalled leases, with the lease book and database stood in for:
 * a lease that comes back serves the request; one that does not, or no room when it does, gives
 * the true reason after the wait: the refusal itself when the balance or the cap is short
 * whatever settles, else the 429 `credits_in_flight` to retry in a second (never a 402 while
 * the balance covers the call); many requests short together share one wait rather than polling once each.
 * The wait runs on a fake clock the test steps.
 */
import { afterShortfall, RECALL_WAIT_MS, type ShortfallParties } from '../../../src/domain/credits/account-shortfall';
import { DomainError } from '../../../src/domain/errors/domain-error';
import { LocalTopicFeed } from '../../../src/infra/events/local-topic-feed';
import { fakeClock } from '../../support/fake-clock';

const shortfall = new DomainError('daily_cap_exceeded', 'cap spent', { retryAfterSeconds: 3600 });
const ASKED = { amountMicro: 1_000_000, budgets: { day: 3_000_000, week: null, month: null }, now: new Date('2026-12-07T12:00:00Z') };

const inFlight = { status: 429, type: 'rate_limit_exceeded', code: 'credits_in_flight', retryAfterSeconds: 1 };

function parties(openElsewhere: () => number, shortWhateverSettles: () => boolean = () => false) {
  const asked = { openElsewhere: 0, trueShortfall: 0 };
  const clock = fakeClock();
  const p: ShortfallParties = {
    returnIdleOf: async () => false,
    holdsLeaseOf: () => false,
    recall: () => undefined,
    openElsewhere: async () => (asked.openElsewhere++, openElsewhere()),
    openAnywhere: async () => openElsewhere(),
    trueShortfall: async () => (asked.trueShortfall++, shortWhateverSettles() ? shortfall : null),
    recalls: new LocalTopicFeed(),
    clock,
  };
  return { p, asked, clock };
}

test("another instance's lease that comes back on the recall serves the request", async () => {
  let open = 1;
  const { p, clock } = parties(() => open);
  let room = false;
  clock.setTimeout(() => ((open = 0), (room = true)), 40);
  const request = async () => {
    if (!room) throw shortfall;
    return 'granted';
  };
  const answer = afterShortfall(p, { accountId: 'a', keyId: 'k' }, ASKED, request);
  await clock.tickAsync(60);
  await expect(answer).resolves.toBe('granted');
});

test('no room once the lease is back: the cap spent by committed charges is the real refusal; room held by calls in progress is the 429 to retry', async () => {
  let open = 1;
  let capSpent = true;
  const { p, clock } = parties(
    () => open,
    () => capSpent,
  );
  clock.setTimeout(() => (open = 0), 40);
  const spent = async () => Promise.reject(shortfall);
  const capRefusal = afterShortfall(p, { accountId: 'a', keyId: 'k' }, ASKED, spent).catch((e: unknown) => e);
  await clock.tickAsync(60);
  expect(await capRefusal).toBe(shortfall);
  open = 1;
  capSpent = false;
  const inFlightRefusal = afterShortfall(p, { accountId: 'a', keyId: 'k' }, ASKED, spent).catch((e: unknown) => e);
  await clock.tickAsync(RECALL_WAIT_MS + 50);
  expect(await inFlightRefusal).toMatchObject(inFlight);
});

test('no lease open anywhere: short whatever settles is the refusal at once; otherwise the room came back and the request is tried again', async () => {
  const { p, asked } = parties(
    () => 0,
    () => true,
  );
  let tries = 0;
  const spent = async () => (tries++, Promise.reject(shortfall));
  await expect(afterShortfall(p, { accountId: 'a' }, ASKED, spent)).rejects.toBe(shortfall);
  expect([tries, asked.trueShortfall]).toEqual([0, 1]);
  const roomy = parties(
    () => 0,
    () => false,
  );
  await expect(afterShortfall(roomy.p, { accountId: 'a' }, ASKED, async () => 'granted')).resolves.toBe('granted');
});

test('a lease that does not come back: the 429 to retry in a second, after the wait; concurrent requests share one wait', async () => {
  const { p, asked, clock } = parties(() => 1);
  let answered = 0;
  const pending = Array.from({ length: 50 }, () =>
    afterShortfall(p, { accountId: 'a' }, ASKED, async () => Promise.reject(shortfall)).catch((e: DomainError) => (answered++, e)),
  );
  // Nobody is answered before the wait is over; everybody at its end (the next look after it).
  await clock.tickAsync(RECALL_WAIT_MS - 1);
  expect(answered).toBe(0);
  await clock.tickAsync(50);
  expect(answered).toBe(50);
  const outcomes = await Promise.all(pending);
  for (const err of outcomes) expect(err).toMatchObject(inFlight);
  // 50 first looks, then one poller's (a wait of RECALL_WAIT_MS at one look per 15 ms or more), not 50 pollers'.
  expect(asked.openElsewhere).toBeLessThan(50 + RECALL_WAIT_MS / 15 + 5);
});
