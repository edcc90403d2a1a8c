import type Redis from 'ioredis';
import type { KeyChangeFeed } from '../../domain/keys/key-change-feed';

const CHANNEL = 'svc:key-changes';

/**
 * Key changes over one Redis pub/sub channel. `live` is true only while this instance's
 * subscription holds: from the moment the connection drops until it is subscribed again, caches
 * read the database instead, and they are flushed at both ends of the gap. A publish that fails
 * (Redis away) loses nothing: every other instance is then in a gap and reads the database too.
 */
export class RedisKeyChangeFeed implements KeyChangeFeed {
  private readonly subscriber: Redis;
  private readonly listeners = new Set<(keyId: string) => void>();
  private readonly gapListeners = new Set<() => void>();
  private subscribed = false;

  constructor(private readonly publisher: Redis) {
    this.subscriber = publisher.duplicate({ connectionName: 'svc-gateway-keys', enableOfflineQueue: true, maxRetriesPerRequest: null });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string, keyId: string) => {
      if (channel === CHANNEL) for (const l of this.listeners) l(keyId);
    });
    this.subscriber.on('close', () => this.setSubscribed(false));
    this.subscriber.on('ready', () => this.subscribe_());
    this.subscribe_();
  }

  get live(): boolean {
    return this.subscribed;
  }

  private subscribe_(): void {
    this.subscriber.subscribe(CHANNEL).then(
      () => this.setSubscribed(this.subscriber.status === 'ready'),
      () => this.setSubscribed(false),
    );
  }

  private setSubscribed(value: boolean): void {
    if (this.subscribed === value) return;
    this.subscribed = value;
    for (const l of this.gapListeners) l();
  }

  async publish(keyId: string): Promise<void> {
    await this.publisher.publish(CHANNEL, keyId).catch(() => undefined);
  }

  subscribe(listener: (keyId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onGap(listener: () => void): () => void {
    this.gapListeners.add(listener);
    return () => this.gapListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.subscriber.disconnect();
  }
}
