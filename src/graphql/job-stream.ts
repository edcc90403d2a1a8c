import type { JobEventBus, JobEventScope } from '../domain/events/job-events';
import type { VideoJob } from '../domain/video/video-job';
import { EventStream } from './event-stream';

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
 * The job events one subscription sees, as an EventStream: the state read first, then only
 * newer states; a single job's stream ends after its terminal state, and a re-read after the bus
 * reconnects adds what may have been lost meanwhile.
 */
export class JobStream extends EventStream<VideoJob> {
  private latest: VideoJob | null = null;
  /** Many-job streams with resyncChanged: each job's last delivered updatedAt (ms), the oldest dropped first. */
  private delivered: Map<string, number> | null = null;

  constructor(
    bus: JobEventBus,
    private readonly opts: JobStreamOptions,
  ) {
    super(null, opts.maxBuffer);
    this.listenWith(
      bus.subscribe(({ job }) => {
        if (opts.accept(job)) this.push(job);
      }, opts.scope),
    );
    const { resync, resyncChanged } = opts;
    if (resync && bus.onReconnect) {
      this.listenWith(
        bus.onReconnect(() => {
          resync().then(
            (job) => this.push(job),
            () => undefined,
          );
        }),
      );
    } else if (resyncChanged && bus.onReconnect) {
      this.listenWith(
        bus.onReconnect((downSince) => {
          resyncChanged(new Date(downSince.getTime() - RESYNC_MARGIN_MS)).then(
            (jobs) => jobs.filter((job) => opts.accept(job)).forEach((job) => this.push(job)),
            () => undefined,
          );
        }),
      );
    }
  }

  /** The state read after subscribing goes first; buffered events it already covers are dropped. */
  startWith(job: VideoJob): void {
    if (this.closed) return;
    const later = this.buffer.filter((e) => isNewer(e, job));
    this.buffer = [];
    this.latest = null;
    this.ending = false;
    for (const j of [job, ...later]) this.push(j);
  }

  private push(job: VideoJob): void {
    if (this.closed || this.ending) return;
    if (this.opts.resyncChanged && !this.isNewForThisStream(job)) return;
    if (this.opts.singleJob) {
      if (this.latest && !isNewer(job, this.latest)) return;
      this.latest = job;
      // Nothing follows a terminal state.
      if (isTerminal(job)) this.endAfterQueued();
    }
    this.deliver(job);
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
}
