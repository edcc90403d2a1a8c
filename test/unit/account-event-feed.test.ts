import { AccountEventFeed } from '../../src/infra/events/account-event-feed';
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';
import { EventStream } from '../../src/graphql/event-stream';
import type { AccountEvent } from '../../src/domain/events/account-events';
import type { TopicFeed } from '../../src/domain/ports/topic-feed';

/** A topic feed whose subscription the test drops and restores, as Redis's does through an outage. */
class GappyFeed implements TopicFeed {
  private readonly inner = new LocalTopicFeed();
  private readonly gapListeners = new Set<() => void>();
  live = true;
  set(up: boolean): void {
    this.live = up;
    for (const l of this.gapListeners) l();
  }
  publish = (id: string) => this.inner.publish(id);
  subscribe = (listener: (id: string) => void) => this.inner.subscribe(listener);
  caughtUp = () => this.inner.caughtUp();
  close = () => this.inner.close();
  onGap(listener: () => void): () => void {
    this.gapListeners.add(listener);
    return () => this.gapListeners.delete(listener);
  }
}

const streamOf = (events: AccountEventFeed, accountId: string, maxBuffer = 10) =>
  new EventStream<AccountEvent | 'resumed'>((push) => {
    const off = events.subscribe(accountId, push);
    const offResumed = events.onResumed(() => push('resumed'));
    return () => {
      off();
      offResumed();
    };
  }, maxBuffer);

test("a subscriber hears its own account's events only, in order; what is not an event of ours is dropped", async () => {
  const feed: TopicFeed = new LocalTopicFeed();
  const events = new AccountEventFeed(feed);
  const stream = streamOf(events, 'acct_1');
  await events.publish({ accountId: 'acct_2', purchaseId: 'cs_test_b' });
  for (const junk of ['not json', 'null', '{"accountId":"acct_1"}', '{"accountId":"acct_1","purchaseId":"x y"}', '{"accountId":1,"purchaseId":"cs_1"}'])
    await feed.publish(junk);
  await events.publish({ accountId: 'acct_1', purchaseId: 'cs_test_a1' });
  await events.publish({ accountId: 'acct_1', purchaseId: 'cs_test_a2' });
  expect([await stream.next(), await stream.next()]).toEqual([
    { value: { accountId: 'acct_1', purchaseId: 'cs_test_a1' }, done: false },
    { value: { accountId: 'acct_1', purchaseId: 'cs_test_a2' }, done: false },
  ]);
  expect(events.listeners).toBe(1);
  await stream.return();
  expect(events.listeners).toBe(0);
});

test('once the feed is back after a gap, a subscriber is told to read again; going down says nothing', async () => {
  const feed = new GappyFeed();
  const events = new AccountEventFeed(feed);
  const stream = streamOf(events, 'acct_1');
  feed.set(false);
  const pending = stream.next();
  feed.set(true);
  expect(await pending).toEqual({ value: 'resumed', done: false });
  await stream.return();
  feed.set(false);
  feed.set(true);
  expect(await stream.next()).toEqual({ value: undefined, done: true });
});

test('return() while a read waits ends it at once; a reader far behind gets an error, not an ever-growing buffer', async () => {
  const events = new AccountEventFeed(new LocalTopicFeed());
  const waiting = streamOf(events, 'acct_1');
  const pending = waiting.next();
  await waiting.return();
  expect(await pending).toEqual({ value: undefined, done: true });

  const slow = streamOf(events, 'acct_1', 3);
  for (let i = 0; i < 5; i++) await events.publish({ accountId: 'acct_1', purchaseId: `cs_test_${i}` });
  expect(slow.isListening).toBe(false);
  expect(events.listeners).toBe(0);
  await expect(slow.next()).rejects.toMatchObject({ type: 'service_unavailable' });
  expect(await slow.next()).toEqual({ value: undefined, done: true });
});
