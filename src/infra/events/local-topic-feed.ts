import type { KeyChangeFeed } from '../../domain/keys/key-change-feed';

/** One process: a change is seen by the only cache there is, synchronously. */
export class LocalKeyChangeFeed implements KeyChangeFeed {
  private readonly listeners = new Set<(keyId: string) => void>();
  readonly live = true;

  async publish(keyId: string): Promise<void> {
    for (const listener of this.listeners) listener(keyId);
  }

  subscribe(listener: (keyId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  onGap(): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
