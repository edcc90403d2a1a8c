import type { SqlExecutor } from '../ports/database';
import type { JobEventBus } from '../events/job-events';
import type { WorkQueue } from '../work/work-queue';
import { scheduleJobWebhook } from '../webhooks/webhook-events';
import type { WebhookRepository } from '../webhooks/webhook-repository';
import { creditsToMicro } from '../shared/money';
import type { VideoJob } from './video-job';
import type { VideoJobRepository } from './video-job-repository';
import type { VideoLedger } from './video-ledger';

/** The reason of a job its owner cancelled. */
export const CANCELLED_REASON = 'cancelled';

/** What a `video_cancel` work row carries: where the upstream has the job. */
export interface UpstreamCancel {
  queueId: string;
  routeId: string | null;
}

/**
 * The only way a job leaves PROCESSING. One transaction moves the state (only from PROCESSING,
 * so a second finisher does nothing: a cancel and a completion that race end in whichever locked
 * the row first), refunds a failure exactly once, schedules the webhook and drops the job's
 * polling row; the event is published after commit.
 */
export class JobFinisher {
  constructor(
    private readonly jobs: VideoJobRepository,
    private readonly queue: WorkQueue,
    private readonly webhooks: WebhookRepository,
    private readonly events: JobEventBus,
    private readonly ledger: VideoLedger,
    private readonly onFinished: (job: VideoJob, webhook: boolean) => void = () => undefined,
  ) {}

  async complete(jobId: string, mediaId: string, thumbnailMediaId: string | null = null): Promise<VideoJob | undefined> {
    return this.finish(jobId, async (tx, job) =>
      this.jobs.finish(tx, job.id, { status: 'COMPLETED', mediaId, thumbnailMediaId, usedMicro: creditsToMicro(job.creditsCharged) }),
    );
  }

  async fail(jobId: string, reason: string): Promise<VideoJob | undefined> {
    return this.finish(jobId, (tx, job) => this.failIn(tx, job, reason));
  }

  /**
   * FAILED with reason `cancelled`, refunded, as any failure; in the same transaction, a job the
   * upstream has is scheduled to be cancelled there (`video_cancel`), so a crash cannot leave it
   * running. Undefined when the job was no longer PROCESSING.
   */
  async cancel(jobId: string): Promise<VideoJob | undefined> {
    return this.finish(jobId, async (tx, job) => {
      const failed = await this.failIn(tx, job, CANCELLED_REASON);
      if (failed && job.queueId) await this.queue.schedule(tx, 'video_cancel', job.id, { queueId: job.queueId, routeId: job.routeId } satisfies UpstreamCancel);
      return failed;
    });
  }

  private async failIn(tx: SqlExecutor, job: VideoJob, reason: string): Promise<VideoJob | undefined> {
    const failed = await this.jobs.finish(tx, job.id, { status: 'FAILED', reason });
    if (failed && !failed.testMode) await this.ledger.refundOnce(tx, { accountId: job.accountId, reference: job.id, reason: `video job failed: ${reason}` });
    return failed;
  }

  private async finish(jobId: string, transition: (tx: SqlExecutor, job: VideoJob) => Promise<VideoJob | undefined>): Promise<VideoJob | undefined> {
    let webhook = false;
    const finished = await this.jobs.transaction(async (tx) => {
      const job = await this.jobs.getForUpdate(tx, jobId);
      if (!job || job.status !== 'PROCESSING') return undefined;
      const done = await transition(tx, job);
      if (!done) return undefined;
      webhook = await scheduleJobWebhook(tx, this.webhooks, this.queue, done);
      await this.queue.cancel(tx, 'video_poll', jobId);
      return done;
    });
    if (finished) {
      this.onFinished(finished, webhook);
      await this.events.publish({ job: finished }).catch(() => undefined);
    }
    return finished;
  }
}
