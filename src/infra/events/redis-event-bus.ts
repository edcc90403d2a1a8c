import type Redis from 'ioredis';
import { subscriberOf } from '../redis/redis-client';
import type { JobEvent, JobEventBus, JobEventScope } from '../../domain/events/job-events';
import type { VideoJob } from '../../domain/video/video-job';
import { LocalJobEventBus } from './local-event-bus';

const CHANNEL = 'svc:video-job-events';

/** Dates travel as ISO strings; revive them so subscribers see the same VideoJob as locally. */
function revive(raw: string): JobEvent | undefined {
  let parsed: { job?: unknown };
  try {
    parsed = JSON.parse(raw) as { job?: unknown };
  } catch {
    return undefined;
  }
  // Anything else on the channel (another program's, a malformed one) is not an event of ours.
  if (typeof parsed?.job !== 'object' || parsed.job === null) return undefined;
  const job = parsed.job as Record<string, unknown>;
  for (const k of ['submittedAt', 'deadlineAt', 'createdAt', 'updatedAt']) {
    if (typeof job[k] === 'string') job[k] = new Date(job[k]);
  }
  return { job: job as unknown as VideoJob };
}

/**
 * Every instance publishes to one Redis channel and delivers what it receives to its local
 * subscribers, so each subscriber sees each event once whichever instance did the work, and in
 * Redis's order. (Serving the publisher's own subscribers before the round trip was tried: it
 * saves ~2 ms, but an instance's own event could then overtake an earlier one of another
 * instance still on its way, e.g. a COMPLETED before the PROCESSING it follows.)
 *
 * Through a Redis outage: a publish that fails is delivered to this instance's subscribers
 * directly (other instances miss it); the subscriber connection reconnects and resubscribes by
 * itself, and then `onReconnect` listeners run so subscriptions re-read what they watch.
 */
export class RedisJobEventBus implements JobEventBus {
  private readonly local = new LocalJobEventBus();
  private readonly subscriber: Redis;
  private readonly reconnectListeners = new Set<(downSince: Date) => void>();
  /** Since when the subscriber connection has been down; null while it holds. */
  private downSince: Date | null = null;
  private readonly stopWatching: () => void;

  constructor(
    private readonly publisher: Redis,
    private readonly onPublishFailed: (err: unknown) => void = () => undefined,
  ) {
    ({ connection: this.subscriber, stop: this.stopWatching } = subscriberOf(publisher, 'svc-gateway-events'));
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== CHANNEL) return;
      const event = revive(message);
      if (event) void this.local.publish(event);
    });
    this.subscriber.on('close', () => {
      this.downSince ??= new Date();
    });
    this.subscriber.on('ready', () => {
      const downSince = this.downSince;
      if (!downSince) return;
      this.downSince = null;
      // ioredis resubscribes on its own; subscribing again is harmless and tells us when it holds.
      this.subscriber.subscribe(CHANNEL).then(
        () => this.reconnectListeners.forEach((l) => l(downSince)),
        () => undefined,
      );
    });
    this.subscriber.subscribe(CHANNEL).catch(() => undefined);
  }

  async publish(event: JobEvent): Promise<void> {
    try {
      await this.publisher.publish(CHANNEL, JSON.stringify(event));
    } catch (err) {
      this.onPublishFailed(err);
      await this.local.publish(event);
    }
  }

  /** Subscriptions listening on this instance now. */
  get listeners(): number {
    return this.local.listeners;
  }

  subscribe(listener: (event: JobEvent) => void, scope?: JobEventScope): () => void {
    return this.local.subscribe(listener, scope);
  }

  onReconnect(listener: (downSince: Date) => void): () => void {
    this.reconnectListeners.add(listener);
    return () => this.reconnectListeners.delete(listener);
  }

  async close(): Promise<void> {
    await this.local.close();
    this.stopWatching();
    this.subscriber.disconnect();
  }
}
