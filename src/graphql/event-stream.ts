import { DomainError } from '../domain/errors/domain-error';

/**
 * The events one subscription sees, as an async iterator over what `listen` pushes. Hand-written
 * for the reason JobStream is: return() ends the stream at once, unsubscribes and settles a
 * pending read, where an async generator's would wait behind it.
 */
export class EventStream<T> implements AsyncIterableIterator<T> {
  private buffer: T[] = [];
  private reader: ((r: IteratorResult<T>) => void) | null = null;
  private failure: DomainError | null = null;
  private closed = false;
  private stop: (() => void) | null;

  /** `listen` starts listening with the stream's `push` and answers what stops it. */
  constructor(
    listen: (push: (event: T) => void) => () => void,
    private readonly maxBuffer: number,
  ) {
    this.stop = listen((event) => this.push(event));
  }

  private push(event: T): void {
    if (this.closed || this.failure) return;
    if (this.reader) {
      const deliver = this.reader;
      this.reader = null;
      deliver({ value: event, done: false });
      return;
    }
    if (this.buffer.length >= this.maxBuffer) {
      // A reader is never waiting when the buffer is full; the error surfaces at the next read.
      this.failure = new DomainError('service_unavailable', 'This subscription fell too far behind its events; subscribe again.');
      this.buffer = [];
      this.stopListening();
      return;
    }
    this.buffer.push(event);
  }

  next(): Promise<IteratorResult<T>> {
    if (this.buffer.length > 0) return Promise.resolve({ value: this.buffer.shift()!, done: false });
    if (this.failure) {
      const err = this.failure;
      this.failure = null;
      this.close();
      return Promise.reject(err);
    }
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
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
    return this.stop !== null;
  }

  private stopListening(): void {
    this.stop?.();
    this.stop = null;
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
