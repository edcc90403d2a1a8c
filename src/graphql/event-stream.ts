import { DomainError } from '../domain/errors/domain-error';

/**
 * The events one subscription sees, as an async iterator over what is delivered to it.
 * Hand-written rather than an async generator on purpose: a generator's return() waits behind a
 * pending next(), so a client that unsubscribes while no event comes would keep its listener
 * forever; here return() ends the stream at once, stops every listener and settles the pending
 * read. A slow reader gets at most `maxBuffer` events queued; past that the stream stops
 * listening and fails at the next read. JobStream builds its ordering rules on it.
 */
export class EventStream<T> implements AsyncIterableIterator<T> {
  protected buffer: T[] = [];
  protected closed = false;
  /** Nothing follows what is queued: the stream ends once that is read. */
  protected ending = false;
  private reader: ((r: IteratorResult<T>) => void) | null = null;
  private failure: DomainError | null = null;
  private stops: Array<() => void> = [];

  /**
   * `listen`, when given, starts listening with the stream's delivery and answers what stops it;
   * a subclass that filters first listens itself, through `listenWith`.
   */
  constructor(
    listen: ((push: (event: T) => void) => () => void) | null,
    private readonly maxBuffer: number,
  ) {
    if (listen) this.listenWith(listen((event) => !this.failure && this.deliver(event)));
  }

  /** What stops one of the stream's listeners: called once, when the stream stops listening. */
  protected listenWith(stop: () => void): void {
    this.stops.push(stop);
  }

  /** To the waiting read, or queued for the next. */
  protected deliver(event: T): void {
    if (this.closed) return;
    if (this.reader) {
      const deliver = this.reader;
      this.reader = null;
      deliver({ value: event, done: false });
      return;
    }
    if (this.buffer.length >= this.maxBuffer) {
      // A reader is never waiting when the buffer is full; the error surfaces at the next read.
      this.failure = new DomainError('service_unavailable', 'This subscription fell too far behind its events; subscribe again.');
      this.stopListening();
      this.buffer = [];
      return;
    }
    this.buffer.push(event);
  }

  /** Nothing follows: stop listening now, deliver what is queued, then end. */
  protected endAfterQueued(): void {
    this.ending = true;
    this.stopListening();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift()!, done: false });
    if (this.failure) {
      const err = this.failure;
      this.failure = null;
      this.close();
      return Promise.reject(err);
    }
    if (this.closed || this.ending) {
      this.close();
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => {
      this.reader = resolve;
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(err?: unknown): Promise<IteratorResult<T>> {
    this.close();
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** True once nothing listens for this stream any more. */
  get isListening(): boolean {
    return this.stops.length > 0;
  }

  private stopListening(): void {
    const stops = this.stops;
    this.stops = [];
    for (const stop of stops) stop();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopListening();
    this.buffer = [];
    const reader = this.reader;
    this.reader = null;
    reader?.({ value: undefined, done: true });
  }
}
