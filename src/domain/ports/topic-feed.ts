/**
 * A broadcast of ids on one topic to every instance: key changes (caches drop the key), lease
 * recalls (instances give an account's credits back). In-process without Redis; Redis pub/sub
 * with it.
 */
export interface TopicFeed {
  publish(id: string): Promise<void>;
  subscribe(listener: (id: string) => void): () => void;
  /**
   * False while messages published elsewhere could be missed (the subscription is down): a
   * cache must not answer from memory then.
   */
  readonly live: boolean;
  /**
   * Resolves true once every message published before the call has reached this instance's
   * listeners; false when that cannot be known (the feed is down, or did not answer in time).
   */
  caughtUp(): Promise<boolean>;
  /** Called when the feed goes down and when it is back: what was cached may be stale. */
  onGap(listener: () => void): () => void;
  close(): Promise<void>;
}
