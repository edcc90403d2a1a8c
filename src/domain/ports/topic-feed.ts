/**
 * Tells every instance that a key changed (revoked, permissions or cap edited), so their key
 * caches drop it. In-process without Redis; Redis pub/sub with it.
 */
export interface KeyChangeFeed {
  publish(keyId: string): Promise<void>;
  subscribe(listener: (keyId: string) => void): () => void;
  /**
   * False while changes published elsewhere could be missed (the subscription is down): a
   * cache must not answer from memory then.
   */
  readonly live: boolean;
  /** Called when the feed goes down and when it is back: what was cached may be stale. */
  onGap(listener: () => void): () => void;
  close(): Promise<void>;
}
