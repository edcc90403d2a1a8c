import type { AccountEvent, AccountEventBus } from '../../domain/events/account-events';
import type { TopicFeed } from '../../domain/ports/topic-feed';
import { BatchedFanout } from './batched-fanout';
import { FANOUT_BATCH } from './local-event-bus';

const ID = /^[A-Za-z0-9_]{1,255}$/;

/** A message of the feed, or undefined for anything else on the channel (another program's, a malformed one). */
function parse(message: string): AccountEvent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(message);
  } catch {
    return undefined;
  }
  const { accountId, purchaseId } = (parsed ?? {}) as Record<string, unknown>;
  return typeof accountId === 'string' && typeof purchaseId === 'string' && ID.test(accountId) && ID.test(purchaseId) ? { accountId, purchaseId } : undefined;
}

/**
 * Account events over a topic feed (Redis pub/sub with REDIS_URL, in-process without), each
 * instance handing what it hears to its own subscribers of that account through a batched
 * fan-out, as job events are.
 */
export class AccountEventFeed implements AccountEventBus {
  private readonly fanout = new BatchedFanout<AccountEvent>({ batchSize: FANOUT_BATCH });
  private readonly stopListening: () => void;

  constructor(private readonly feed: TopicFeed) {
    this.stopListening = feed.subscribe((message) => {
      const event = parse(message);
      if (event) this.fanout.publish(event, [event.accountId]);
    });
  }

  /** Subscriptions listening on this instance now. */
  get listeners(): number {
    return this.fanout.size;
  }

  async publish(event: AccountEvent): Promise<void> {
    await this.feed.publish(JSON.stringify({ accountId: event.accountId, purchaseId: event.purchaseId }));
  }

  subscribe(accountId: string, listener: (event: AccountEvent) => void): () => void {
    return this.fanout.subscribe(listener, accountId);
  }

  onResumed(listener: () => void): () => void {
    // The feed says when it goes down and when it is back; only the second calls for a re-read.
    return this.feed.onGap(() => {
      if (this.feed.live) listener();
    });
  }

  async close(): Promise<void> {
    this.stopListening();
    this.fanout.clear();
    await this.feed.close();
  }
}
