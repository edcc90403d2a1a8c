/**
 * How many of something each key holds now (connections of an address, running jobs of a key),
 * and all keys together. `hold` counts one more and answers its release: one back, once (a
 * second call is harmless); a key back at zero is forgotten, so the map only holds keys in use.
 */
export class KeyedCounts {
  private readonly counts = new Map<string, number>();
  private all = 0;

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  /** Held now, all keys together. */
  get total(): number {
    return this.all;
  }

  hold(key: string): () => void {
    this.counts.set(key, this.get(key) + 1);
    this.all++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.all--;
      const left = this.get(key) - 1;
      if (left > 0) this.counts.set(key, left);
      else this.counts.delete(key);
    };
  }
}
