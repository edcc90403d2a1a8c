/**
 * A purchase of an account moved (paid, refunded, closed unpaid), and its balance with it:
 * published after the transaction that moved it committed, for the owner's live views.
 */
export interface AccountEvent {
  accountId: string;
  purchaseId: string;
}

/**
 * Fan-out of account events to subscribers on every instance: in-process without Redis, Redis
 * pub/sub with it. A subscriber is visited only by its own account's events.
 */
export interface AccountEventBus {
  publish(event: AccountEvent): Promise<void>;
  subscribe(accountId: string, listener: (event: AccountEvent) => void): () => void;
  /**
   * Called when the fan-out is back after a gap (Redis reconnected): events published meanwhile
   * by other instances were lost, so a subscriber reads again what it shows.
   */
  onResumed(listener: () => void): () => void;
  close(): Promise<void>;
}
