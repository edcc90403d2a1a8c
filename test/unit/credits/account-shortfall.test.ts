/**
 * The shortfall path's wait for recalled leases, with the lease book and database stood in for:
 * a lease that comes back serves the request; one that does not, or no room when it does,
 * gives the 402 to retry after the wait; many requests short together share one wait rather than polling once each.
 */
import { afterShortfall, RECALL_WAIT_MS, type ShortfallParties } from '../../../src/domain/credits/account-shortfall';
import { DomainError } from '../../../src/domain/errors/domain-error';
import { LocalTopicFeed } from '../../../src/infra/events/local-topic-feed';

const shortfall = new DomainError('daily_cap_exceeded', 'cap spent', { retryAfterSeconds: 3600 });

function parties(openElsewhere: () => number) {
  const asked = { openElsewhere: 0 };
  const p: ShortfallParties = {
    returnIdleOf: async () => false,
    holdsLeaseOf: () => false,
    recall: () => undefined,
    openElsewhere: async () => (asked.openElsewhere++, openElsewhere()),
    openAnywhere: async () => openElsewhere(),
    recalls: new LocalTopicFeed(),
  };
  return { p, asked };
}

test("another instance's lease that comes back on the recall serves the request", async () => {
  let open = 1;
  const { p } = parties(() => open);
  let room = false;
  setTimeout(() => ((open = 0), (room = true)), 40);
  const request = async () => {
    if (!room) throw shortfall;
    return 'granted';
  };
  await expect(afterShortfall(p, { accountId: 'a', keyId: 'k' }, request, shortfall)).resolves.toBe('granted');
});

test('no room once the lease is back: the 402 to retry in a second, whose retry finds no lease open and gets the real refusal', async () => {
  let open = 1;
  const { p } = parties(() => open);
  setTimeout(() => (open = 0), 40);
  const spent = async () => Promise.reject(shortfall);
  await expect(afterShortfall(p, { accountId: 'a', keyId: 'k' }, spent, shortfall)).rejects.toMatchObject({ type: 'insufficient_credits', retryAfterSeconds: 1 });
  await expect(afterShortfall(p, { accountId: 'a', keyId: 'k' }, spent, shortfall)).rejects.toBe(shortfall);
});

test('a lease that does not come back: the 402 to retry in a second, after the wait; concurrent requests share one wait', async () => {
  const { p, asked } = parties(() => 1);
  const started = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: 50 }, () => afterShortfall(p, { accountId: 'a' }, async () => Promise.reject(shortfall), shortfall).catch((e: DomainError) => e)),
  );
  expect(performance.now() - started).toBeGreaterThanOrEqual(RECALL_WAIT_MS - 20);
  for (const err of outcomes) expect(err).toMatchObject({ type: 'insufficient_credits', retryAfterSeconds: 1 });
  // 50 first looks, then one poller's (a wait of RECALL_WAIT_MS at one look per 15 ms or more), not 50 pollers'.
  expect(asked.openElsewhere).toBeLessThan(50 + RECALL_WAIT_MS / 15 + 5);
});
