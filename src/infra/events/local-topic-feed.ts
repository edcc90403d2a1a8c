import type { TopicFeed } from '../../domain/ports/topic-feed';

/** One process: a message reaches the only subscribers there are, synchronously. */
export class LocalTopicFeed implements TopicFeed {
  private readonly listeners = new Set<(id: string) => void>();
  readonly live = true;

  async publish(id: string): Promise<void> {
    for (const listener of this.listeners) listener(id);
  }

  subscribe(listener: (id: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Delivery is synchronous: everything published is heard; answered a turn later, as Redis's feed would be. */
  caughtUp(): Promise<boolean> {
    return new Promise((resolve) => setImmediate(() => resolve(true)));
  }

  onGap(): () => void {
    return () => undefined;
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
