/**
 * Delivery of one event to many listeners without holding the event loop.
 *
 * Listeners register under a topic (e.g. `account:<id>`) or for every event; an event names its
 * topics, so it only visits the listeners that asked for it (an event of one account never
 * walks another account's subscribers). Deliveries run in batches of `batchSize` listener calls:
 * the first batch at once, on the publisher's turn (so a handful of subscribers is served as
 * before, without a hop), and each further batch after a `setImmediate`, so the I/O that arrived
 * meanwhile (a /healthz probe, a request) is served between batches. What a listener starts
 * with microtasks (a subscription resolving, executing its result, writing to its socket) runs
 * before the next batch, so a batch bounds the work of one turn.
 *
 * Events are delivered in the order they were published, to every listener: one queue, each
 * event's listeners walked in turn. A listener's topic set is iterated live, so one that leaves
 * during a fan-out is not called afterwards; one that joins during it may still see that event
 * (it subscribed while it was being delivered). A listener that throws costs only its own call.
 */
type Listener<E> = (event: E) => void;

interface Pending<E> {
  event: E;
  listeners: Iterator<Listener<E>>;
}

function* each<E>(sets: Array<Set<Listener<E>>>): Generator<Listener<E>> {
  for (const set of sets) yield* set;
}

export class BatchedFanout<E> {
  private readonly everyEvent = new Set<Listener<E>>();
  private readonly byTopic = new Map<string, Set<Listener<E>>>();
  private readonly queue: Pending<E>[] = [];
  private running = false;
  private listenerCount = 0;

  constructor(private readonly opts: { batchSize: number; onListenerError?: (err: unknown) => void }) {}

  /** Listeners registered now (each subscription is one). */
  get size(): number {
    return this.listenerCount;
  }

  subscribe(listener: Listener<E>, topic?: string): () => void {
    let set = this.everyEvent;
    if (topic !== undefined) {
      set = this.byTopic.get(topic) ?? new Set();
      this.byTopic.set(topic, set);
    }
    // The same function twice is two subscriptions: wrap it so each has an identity of its own.
    const entry: Listener<E> = (e) => listener(e);
    set.add(entry);
    this.listenerCount++;
    return () => {
      if (!set.delete(entry)) return;
      this.listenerCount--;
      if (topic !== undefined && set.size === 0 && this.byTopic.get(topic) === set) this.byTopic.delete(topic);
    };
  }

  publish(event: E, topics: readonly string[]): void {
    const sets = [this.everyEvent];
    for (const topic of topics) {
      const set = this.byTopic.get(topic);
      if (set) sets.push(set);
    }
    if (sets.every((s) => s.size === 0)) return;
    this.queue.push({ event, listeners: each(sets) });
    if (!this.running) this.runBatch();
  }

  clear(): void {
    this.everyEvent.clear();
    this.byTopic.clear();
    this.queue.length = 0;
    this.listenerCount = 0;
  }

  private readonly runBatch = (): void => {
    this.running = true;
    let budget = this.opts.batchSize;
    while (budget > 0 && this.queue.length > 0) {
      const head = this.queue[0];
      const next = head.listeners.next();
      if (next.done) {
        this.queue.shift();
        continue;
      }
      budget--;
      try {
        next.value(head.event);
      } catch (err) {
        this.opts.onListenerError?.(err);
      }
    }
    if (this.queue.length > 0) setImmediate(this.runBatch);
    else this.running = false;
  };
}
