import type { Catalog } from '../catalog/catalog';
import type { CatalogModel } from '../catalog/model';
import type { MediaLibrary } from '../media/media-library';
import type { WorkItem, WorkQueue } from '../work/work-queue';
import { DomainError } from '../errors/domain-error';
import type { VideoJobRepository } from './video-job-repository';
import type { JobFinisher } from './job-finisher';
import type { VideoJob } from './video-job';
import type { VideoProvider, VideoProviders } from './video-port';

export const TIMEOUT_REASON = 'timeout';
export const SUBMIT_FAILED_REASON = 'The video provider failed to accept the job.';
/** A submission was started under an earlier lease and never recorded (crash mid-call). */
export const SUBMIT_LOST_REASON = 'The video provider did not confirm the submission.';

/**
 * The `video_poll` work handler: asks the provider where a job is and moves it on. It keeps no
 * state of its own (the job row and the provider's queue id are the record), so after a crash
 * any instance picks the row up again and carries on.
 */
export class VideoJobRunner {
  constructor(
    private readonly deps: {
      catalog: Catalog;
      providers: VideoProviders;
      jobs: VideoJobRepository;
      queue: WorkQueue;
      finisher: JobFinisher;
      media: MediaLibrary;
      pollEverySeconds: (provider: string) => number;
      /** How soon after submission the first poll runs (the expected finish). */
      firstPollSeconds: (provider: string) => number;
    },
  ) {}

  handle = async (item: WorkItem): Promise<void> => {
    const { jobs, queue, finisher } = this.deps;
    const read = await jobs.getWithTimeLeft(item.ref);
    if (!read || read.job.status !== 'PROCESSING') {
      await queue.done(item);
      return;
    }
    const { job, secondsLeft: left } = read;
    if (left <= 0) {
      await finisher.fail(job.id, TIMEOUT_REASON);
      return;
    }
    const model = this.deps.catalog.find(job.model);
    if (!model) {
      await finisher.fail(job.id, 'The model of this job is no longer offered.');
      return;
    }
    const { provider, upstreamModel } = this.deps.providers.video(model, job.provider, job.routeId);
    const later = Math.min(this.deps.pollEverySeconds(job.provider), Math.max(0.05, left));

    if (!job.queueId || !job.submittedAt) {
      await this.submit(item, job, model, provider, left);
      return;
    }

    // Polled where it was accepted, under the name that route knows the model by.
    const result = await provider.poll({ queueId: job.queueId, submittedAt: job.submittedAt, spec: { ...job.spec, upstreamModel } });
    if (result.state === 'processing') {
      await queue.retryLater(item, later);
      return;
    }
    if (result.state === 'failed') {
      await finisher.fail(job.id, result.reason);
      return;
    }
    // Copy the video into our media store so its URL is permanent and ours.
    const saved = await this.deps.media.save(job.accountId, result.video.data, result.video.contentType || 'video/mp4');
    await finisher.complete(job.id, saved.id);
  };

  /**
   * Submits a job upstream at most once. The row's payload records, under this claim's fence,
   * that a submission is starting; a later claim that finds the mark without a queue id knows an
   * earlier attempt died mid-call (the provider may have the job) and fails the job with a refund
   * rather than risk a second submission — unless the provider's submit is repeatable (the
   * simulator's), when it is simply submitted again. The model's routes are tried in turn while each
   * surely did not take the job; a submission every route refused, or one whose answer was lost,
   * fails the job (refund and webhook by the finisher): retrying an unanswered submit could create
   * a duplicate.
   */
  private async submit(item: WorkItem, job: VideoJob, model: CatalogModel, provider: VideoProvider, left: number): Promise<void> {
    const { jobs, queue, finisher } = this.deps;
    if (item.payload.submitStarted && !provider.submitIsRepeatable) {
      await finisher.fail(job.id, SUBMIT_LOST_REASON);
      return;
    }
    if (!(await queue.fence(item, { ...item.payload, submitStarted: true }))) return;
    let submitted: { queueId: string; routeId: string | null };
    try {
      submitted = await this.deps.providers.submitVideo(model, job.provider, job.spec);
    } catch (err) {
      await finisher.fail(job.id, err instanceof DomainError && err.type !== 'upstream_error' ? err.message : SUBMIT_FAILED_REASON);
      return;
    }
    const remaining = Math.max(0.05, left);
    await jobs.transaction(async (tx) => {
      if (await jobs.setSubmitted(tx, job.id, submitted.queueId, submitted.routeId))
        await queue.retryLater(item, Math.min(this.deps.firstPollSeconds(job.provider), remaining), item.payload, tx);
    });
  }
}
