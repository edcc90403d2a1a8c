import type Redis from 'ioredis';
import { subscriberOf } from '../redis/redis-client';
import type { TopicFeed } from '../../domain/ports/topic-feed';

/**
 * One topic over one Redis pub/sub channel. `live` is true only while this instance's
 * subscription holds: from the moment the connection drops until it is subscribed again, caches
 * read the database instead, and they are flushed at both ends of the gap. A publish that fails
 * (Redis away) loses nothing: every other instance is then in a gap and reads the database too.
 */
/** How long a caught-up check waits for Redis before it answers "cannot tell". */
const CAUGHT_UP_WITHIN_MS = 250;

const withinMs = (check: Promise<boolean>, ms: number): Promise<boolean> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void check.then((ok) => {
      clearTimeout(timer);
      resolve(ok);
    });
  });

export class RedisTopicFeed implements TopicFeed {
  private readonly subscriber: Redis;
  private readonly listeners = new Set<(id: string) => void>();
  private readonly gapListeners = new Set<() => void>();
  private subscribed = false;
  private barrier: Promise<boolean> | undefined;
  private readonly stopWatching: () => void;

  constructor(
    private readonly publisher: Redis,
    private readonly channel: string,
  ) {
    ({ connection: this.subscriber, stop: this.stopWatching } = subscriberOf(publisher, `svc-gateway-${channel.replace(/\W+/g, '-')}`));
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string, id: string) => {
      if (channel === this.channel) for (const l of this.listeners) l(id);
    });
    this.subscriber.on('close', () => this.setSubscribed(false));
    this.subscriber.on('ready', () => this.subscribe_());
    this.subscribe_();
  }

  get live(): boolean {
    return this.subscribed;
  }

  private subscribe_(): void {
    this.subscriber.subscribe(this.channel).then(
      () => this.setSubscribed(this.subscriber.status === 'ready'),
      () => this.setSubscribed(false),
    );
  }

  private setSubscribed(value: boolean): void {
    if (this.subscribed === value) return;
    this.subscribed = value;
    for (const l of this.gapListeners) l();
  }

  /**
   * A PING on the subscriber's connection: Redis answers it after every message it sent that
   * connection before, so its PONG means those messages have been heard. The calls of one turn
   * share one PING (sent after each of them began).
   */
  caughtUp(): Promise<boolean> {
    if (!this.subscribed) return Promise.resolve(false);
    if (!this.barrier) {
      this.barrier = withinMs(
        this.subscriber.ping().then(
          () => true,
          () => false,
        ),
        CAUGHT_UP_WITHIN_MS,
      );
      // Shared by this turn's calls only: a PING sent before a later call began proves nothing to it.
      setImmediate(() => (this.barrier = undefined));
    }
    return this.barrier;
  }

  async publish(id: string): Promise<void> {
    await this.publisher.publish(this.channel, id).catch(() => undefined);
  }

  subscribe(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onGap(listener: () => void): () => void {
    this.gapListeners.add(listener);
    return () => this.gapListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.stopWatching();
    this.subscriber.disconnect();
  }
}
