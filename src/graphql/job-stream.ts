import { DomainError } from '../domain/errors/domain-error';
import type { JobEventBus, JobEventScope } from '../domain/events/job-events';
import type { VideoJob } from '../domain/video/video-job';

const RANK = { PROCESSING: 0, COMPLETED: 1, FAILED: 1 } as const;
export const isTerminal = (job: VideoJob): boolean => job.status !== 'PROCESSING';

/** Later by updated_at, or the same instant but further along (a state never moves back). */
function isNewer(a: VideoJob, b: VideoJob): boolean {
  const dt = a.updatedAt.getTime() - b.updatedAt.getTime();
  return dt > 0 || (dt === 0 && RANK[a.status] > RANK[b.status]);
}

export interface JobStreamOptions {
  /** The events the bus brings this stream (its account's, or its job's); `accept` still decides. */
  scope?: JobEventScope;
  /** Which events this subscriber sees (its account, its job). */
  accept: (job: VideoJob) => boolean;
  /** Events held for a slow reader; past this the stream ends with an error instead of growing. */
  maxBuffer: number;
  /** One job: drop states older than the last one queued, end after COMPLETED or FAILED. */
  singleJob?: boolean;
  /** Reads the current state again after the bus reconnects (events may have been lost meanwhile). */
  resync?: () => Promise<VideoJob>;
  /**
   * Many jobs (an account's): reads the jobs changed since the bus went down, after it reconnects.
   * Each job's state is then delivered only when newer than the last this stream delivered of it.
   */
  resyncChanged?: (downSince: Date) => Promise<VideoJob[]>;
}

/** How far to read back before the moment the bus went down: instances' clocks and the database's differ a little. */
const RESYNC_MARGIN_MS = 10_000;
/** Jobs whose last delivered state a many-job stream remembers (to skip what a re-read repeats). */
const REMEMBERED_JOBS = 64;

/**
 * The job events one subscription sees, as an async iterator. Hand-written rather than an async
 * generator on purpose: a generator's return() waits behind a pending next(), so a client that
 * unsubscribes while no event comes would keep its bus listener forever; here return() ends the
 * stream at once, unsubscribes and settles the pending read.
 */
export class JobStream implements AsyncIterableIterator<VideoJob> {
  private buffer: VideoJob[] = [];
  private latest: VideoJob | null = null;
  private reader: ((r: IteratorResult<VideoJob>) => void) | null = null;
  private failure: DomainError | null = null;
  private closed = false;
  private endAfterBuffer = false;
  private unsubscribe: (() => void) | null;
  private stopResync: (() => void) | null = null;
  /** Many-job streams with resyncChanged: each job's last delivered updatedAt (ms), the oldest dropped first. */
  private delivered: Map<string, number> | null = null;

  constructor(
    bus: JobEventBus,
    private readonly opts: JobStreamOptions,
  ) {
    this.unsubscribe = bus.subscribe(({ job }) => {
      if (opts.accept(job)) this.push(job);
    }, opts.scope);
    const { resync, resyncChanged } = opts;
    if (resync && bus.onReconnect) {
      this.stopResync = bus.onReconnect(() => {
        resync().then(
          (job) => this.push(job),
          () => undefined,
        );
      });
    } else if (resyncChanged && bus.onReconnect) {
      this.stopResync = bus.onReconnect((downSince) => {
        resyncChanged(new Date(downSince.getTime() - RESYNC_MARGIN_MS)).then(
          (jobs) => jobs.filter((job) => opts.accept(job)).forEach((job) => this.push(job)),
          () => undefined,
        );
      });
    }
  }

  /** The state read after subscribing goes first; buffered events it already covers are dropped. */
  startWith(job: VideoJob): void {
    if (this.closed) return;
    const later = this.buffer.filter((e) => isNewer(e, job));
    this.buffer = [];
    this.latest = null;
    this.endAfterBuffer = false;
    for (const j of [job, ...later]) this.push(j);
  }

  private push(job: VideoJob): void {
    if (this.closed || this.endAfterBuffer) return;
    if (this.opts.resyncChanged && !this.isNewForThisStream(job)) return;
    if (this.opts.singleJob) {
      if (this.latest && !isNewer(job, this.latest)) return;
      this.latest = job;
      if (isTerminal(job)) {
        // Nothing follows a terminal state: stop listening now, deliver what is queued, then end.
        this.endAfterBuffer = true;
        this.stopListening();
      }
    }
    if (this.reader) {
      const deliver = this.reader;
      this.reader = null;
      deliver({ value: job, done: false });
      return;
    }
    if (this.buffer.length >= this.opts.maxBuffer) {
      // A reader is never waiting when the buffer is full; the error surfaces at the next read.
      this.failure = new DomainError('service_unavailable', 'This subscription fell too far behind its events; subscribe again.');
      this.stopListening();
      this.buffer = [];
      return;
    }
    this.buffer.push(job);
  }

  /** False for a state this many-job stream already delivered (a re-read repeats what the bus brought). */
  private isNewForThisStream(job: VideoJob): boolean {
    const delivered = (this.delivered ??= new Map<string, number>());
    const last = delivered.get(job.id);
    const at = job.updatedAt.getTime() * 2 + (isTerminal(job) ? 1 : 0);
    if (last !== undefined && at <= last) return false;
    delivered.delete(job.id);
    delivered.set(job.id, at);
    if (delivered.size > REMEMBERED_JOBS) delivered.delete(delivered.keys().next().value!);
    return true;
  }

  next(): Promise<IteratorResult<VideoJob>> {
    const job = this.buffer.shift();
    if (job) return Promise.resolve({ value: job, done: false });
    if (this.failure) {
      const err = this.failure;
      this.failure = null;
      this.closed = true;
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    if (this.closed || this.endAfterBuffer) {
      this.close();
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve) => {
      this.reader = resolve;
    });
  }

  return(): Promise<IteratorResult<VideoJob>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(err?: unknown): Promise<IteratorResult<VideoJob>> {
    this.close();
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  /** True once nothing listens on the bus for this stream any more. */
  get isListening(): boolean {
    return this.unsubscribe !== null;
  }

  private stopListening(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.stopResync?.();
    this.stopResync = null;
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
