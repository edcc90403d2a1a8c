/**
 * Account events over Redis, on a Redis of the test's own: an event published by one instance
 * reaches another instance's subscriber of that account, and only that account's; when the
 * subscriber connection comes back after Redis went away, the other instance's subscribers are
 * told to read again.
 */
import Redis from 'ioredis';
import { AccountEventFeed } from '../../src/infra/events/account-event-feed';
import { RedisTopicFeed } from '../../src/infra/events/redis-topic-feed';
import type { AccountEvent } from '../../src/domain/events/account-events';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../support/own-redis';
import { pollUntil } from '../support/poll';
import { closedRedis } from '../support/redis-close';

const maybe = hasRedisServer() ? describe : describe.skip;

maybe('account events over Redis', () => {
  let server: OwnRedis;
  const clients: Redis[] = [];
  const feeds: AccountEventFeed[] = [];
  const instance = async () => {
    const c = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: () => 50 });
    c.on('error', () => undefined);
    clients.push(c);
    await new Promise<void>((resolve) => (c.status === 'ready' ? resolve() : c.once('ready', () => resolve())));
    const feed = new AccountEventFeed(new RedisTopicFeed(c, 'svc:account-events'));
    feeds.push(feed);
    return feed;
  };
  const subscribers = async () => {
    const c = clients[0]!;
    return Number(((await c.pubsub('NUMSUB', 'svc:account-events')) as [string, number])[1]);
  };

  beforeAll(async () => {
    server = await startOwnRedis();
  });
  afterAll(async () => {
    for (const f of feeds) await f.close();
    for (const c of clients) await closedRedis(c);
    server?.cleanup();
  });

  test("an event published on A reaches B's subscriber of that account only; after Redis comes back, B's subscribers read again", async () => {
    const a = await instance();
    const b = await instance();
    await pollUntil(subscribers, (n) => n === 2, 10_000, 20);
    const heard: AccountEvent[] = [];
    const other: AccountEvent[] = [];
    let resumed = 0;
    b.subscribe('acct_1', (e) => heard.push(e));
    b.subscribe('acct_2', (e) => other.push(e));
    b.onResumed(() => resumed++);

    await a.publish({ accountId: 'acct_1', purchaseId: 'cs_test_1' });
    await a.publish({ accountId: 'acct_1', purchaseId: 'cs_test_2' });
    await pollUntil(
      async () => heard.length,
      (n) => n === 2,
      10_000,
      20,
    );
    expect(heard).toEqual([
      { accountId: 'acct_1', purchaseId: 'cs_test_1' },
      { accountId: 'acct_1', purchaseId: 'cs_test_2' },
    ]);
    expect(other).toEqual([]);

    server.stop();
    server.start();
    await pollUntil(
      async () => resumed,
      (n) => n >= 1,
      20_000,
      50,
    );
    await pollUntil(subscribers, (n) => n === 2, 10_000, 20);
    await a.publish({ accountId: 'acct_1', purchaseId: 'cs_test_3' });
    await pollUntil(
      async () => heard.map((e) => e.purchaseId),
      (ids) => ids.includes('cs_test_3'),
      10_000,
      20,
    );
  });
});
