import type { JobEvent, JobEventBus, JobEventScope } from '../../domain/events/job-events';
import { BatchedFanout } from './batched-fanout';

/**
 * Listener calls per event-loop turn. Each call wakes one subscription, whose result is then
 * executed and written to its socket before the turn ends (≈ 30–60 µs each), so a batch holds the
 * loop for about 10 ms at most and 10,000 subscribers are served in ~40 turns with I/O between.
 */
export const FANOUT_BATCH = 200;

const topicOf = (scope: JobEventScope) => (scope.jobId !== undefined ? `job:${scope.jobId}` : `account:${scope.accountId}`);

/** One process: events reach this process's subscribers through a batched fan-out (no limit on listeners). */
export class LocalJobEventBus implements JobEventBus {
  private readonly fanout = new BatchedFanout<JobEvent>({ batchSize: FANOUT_BATCH });

  /** Subscriptions listening now. */
  get listeners(): number {
    return this.fanout.size;
  }

  async publish(event: JobEvent): Promise<void> {
    this.fanout.publish(event, [`account:${event.job.accountId}`, `job:${event.job.id}`]);
  }

  subscribe(listener: (event: JobEvent) => void, scope?: JobEventScope): () => void {
    return this.fanout.subscribe(listener, scope && topicOf(scope));
  }

  async close(): Promise<void> {
    this.fanout.clear();
  }
}
