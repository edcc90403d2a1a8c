/**
 * The job-event bus across instances, on a Redis of the test's own: each subscriber sees each
 * event once and in order, whichever instance published it; a Redis that is gone still leaves
 * the publisher's own subscribers served; anything else on the channel is ignored.
 */
import Redis from 'ioredis';
import { RedisJobEventBus } from '../../src/infra/events/redis-event-bus';
import type { JobEvent } from '../../src/domain/events/job-events';
import type { VideoJob } from '../../src/domain/video/video-job';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../support/own-redis';
import { pollUntil } from '../support/poll';
import { closedRedis } from '../support/redis-close';

const maybe = hasRedisServer() ? describe : describe.skip;

maybe('job events over Redis', () => {
  let server: OwnRedis;
  const clients: Redis[] = [];
  const buses: RedisJobEventBus[] = [];
  const client = () => {
    const c = new Redis(server.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    c.on('error', () => undefined);
    clients.push(c);
    return c;
  };
  const ready = (c: Redis) => new Promise<void>((resolve) => (c.status === 'ready' ? resolve() : c.once('ready', () => resolve())));
  const bus = async (onPublishFailed?: (err: unknown) => void) => {
    const c = client();
    await ready(c);
    const b = new RedisJobEventBus(c, onPublishFailed);
    buses.push(b);
    return b;
  };
  const event = (id: string, status: VideoJob['status']): JobEvent => ({
    job: { id, accountId: 'acct_events', status, createdAt: new Date('2026-11-23T00:00:00Z'), updatedAt: new Date() } as unknown as VideoJob,
  });
  /** Until Redis counts every bus made so far on the channel: a fixed sleep was short on a loaded machine. */
  const allSubscribed = async () => {
    const redis = client();
    await ready(redis);
    const subscribers = async () => Number(((await redis.pubsub('NUMSUB', 'svc:video-job-events')) as [string, number])[1]);
    await pollUntil(subscribers, (n) => n >= buses.length, 10_000, 20);
  };
  /**
   * Until every list holds each of `ids`: events published last, after those a test looks at, by
   * each publisher. Redis keeps each connection's order, so by then a duplicate of an earlier
   * event would have arrived too.
   */
  const delivered = (lists: JobEvent[][], ids: string[]) =>
    pollUntil(
      async () => lists.every((list) => ids.every((id) => list.some((e) => e.job.id === id))),
      (all) => all,
      10_000,
      20,
    );
  const before = (list: JobEvent[]) => list.filter((e) => !e.job.id.startsWith('vid_last'));

  beforeAll(async () => {
    server = await startOwnRedis();
  });
  afterAll(async () => {
    // The bus closes its own subscriber connection with disconnect(); wait for it to end too.
    const subscribers = buses.map((b) => (b as unknown as { subscriber: Redis }).subscriber);
    // After the restart in the last test a connection may still be reconnecting, with no socket
    // whose close would end it: wait until every one is back.
    await pollUntil(
      async () => [...clients, ...subscribers].map((c) => c.status),
      (s) => s.every((x) => x === 'ready' || x === 'end'),
      10_000,
      20,
    );
    // Until every connection has ended (closedRedis): disconnect() alone left a 2 s timer each.
    await Promise.all([...buses.map((b, i) => closedRedis(subscribers[i], () => b.close())), ...clients.map((c) => closedRedis(c))]);
    server.cleanup();
  });

  test('each subscriber of each instance sees each event once and in order, whichever instance published it; dates stay dates', async () => {
    const [a, b] = [await bus(), await bus()];
    await allSubscribed();
    const seen = { a: [] as JobEvent[], b: [] as JobEvent[] };
    a.subscribe((e) => seen.a.push(e), { accountId: 'acct_events' });
    b.subscribe((e) => seen.b.push(e), { accountId: 'acct_events' });
    // One instance's event, then at once another's about the same job: every subscriber sees them in that order.
    await a.publish(event('vid_1', 'PROCESSING'));
    await b.publish(event('vid_1', 'COMPLETED'));
    await a.publish(event('vid_last_a', 'COMPLETED'));
    await b.publish(event('vid_last_b', 'COMPLETED'));
    await delivered([seen.a, seen.b], ['vid_last_a', 'vid_last_b']);
    expect(before(seen.a).map((e) => `${e.job.id}:${e.job.status}`)).toEqual(['vid_1:PROCESSING', 'vid_1:COMPLETED']);
    expect(before(seen.b).map((e) => `${e.job.id}:${e.job.status}`)).toEqual(['vid_1:PROCESSING', 'vid_1:COMPLETED']);
    for (const e of [...seen.a, ...seen.b]) expect(e.job.createdAt).toBeInstanceOf(Date);
  });

  test('anything on the channel that is not an event is ignored, and the events after it delivered', async () => {
    const a = await bus();
    await allSubscribed();
    const seen: JobEvent[] = [];
    a.subscribe((e) => seen.push(e), { accountId: 'acct_events' });
    const raw = client();
    await ready(raw);
    await raw.publish('svc:video-job-events', 'not json');
    await raw.publish('svc:video-job-events', JSON.stringify({ nothing: true }));
    await raw.publish('svc:video-job-events', JSON.stringify(event('vid_old', 'FAILED')));
    await raw.publish('svc:video-job-events', JSON.stringify(event('vid_last', 'FAILED')));
    await delivered([seen], ['vid_last']);
    expect(before(seen).map((e) => e.job.id)).toEqual(['vid_old']);
  });

  test("with Redis gone, the publisher's subscribers are still served and the failure is reported", async () => {
    const failures: unknown[] = [];
    const a = await bus((err) => failures.push(err));
    const seen: string[] = [];
    a.subscribe((e) => seen.push(e.job.id), { accountId: 'acct_events' });
    server.stop();
    try {
      await a.publish(event('vid_down', 'COMPLETED'));
      expect(seen).toEqual(['vid_down']);
      expect(failures.length).toBe(1);
    } finally {
      server.start();
    }
  });
});
