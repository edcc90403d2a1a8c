import type { Catalog } from '../catalog/catalog';
import type { CatalogModel } from '../catalog/model';
import type { MediaLibrary } from '../media/media-library';
import type { WorkItem, WorkQueue } from '../work/work-queue';
import { DomainError } from '../errors/domain-error';
import type { JobEventBus } from '../events/job-events';
import type { VideoJobRepository } from './video-job-repository';
import type { JobFinisher, UpstreamCancel } from './job-finisher';
import type { VideoJob } from './video-job';
import type { VideoProvider, VideoProviders } from './video-port';

export const TIMEOUT_REASON = 'timeout';
export const SUBMIT_FAILED_REASON = 'The video provider failed to accept the job.';
/** A submission was started under an earlier lease and never recorded (crash mid-call). */
export const SUBMIT_LOST_REASON = 'The video provider did not confirm the submission.';
/** Claims of a `video_cancel` row before the upstream's cancel is given up (its job is over on our side already). */
const CANCEL_ATTEMPTS = 5;

/**
 * The `video_poll` work handler: asks the provider where a job is and moves it on, and the
 * `video_cancel` one: tells the upstream to stop a job that ended here first. It keeps no state
 * of its own (the job row and the provider's queue id are the record), so after a crash any
 * instance picks the row up again and carries on.
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
      /** Where a job's progress is published when an upstream reports a change. */
      events: JobEventBus;
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
      if (result.progress !== undefined) await this.report(job.id, result.progress);
      await queue.retryLater(item, later);
      return;
    }
    if (result.state === 'failed') {
      await finisher.fail(job.id, result.reason);
      return;
    }
    // Copy the video (and its thumbnail) into our media store so their URLs are permanent and ours.
    const { media } = this.deps;
    // A store that fails (503 storage_unavailable) throws: the row is polled again after its lease,
    // until the store takes the media or the job's deadline fails it with its refund.
    const saved = await media.save(job.accountId, result.video.data, result.video.contentType || 'video/mp4');
    const thumbnail = result.thumbnail
      ? await media.save(job.accountId, result.thumbnail.data, result.thumbnail.contentType).catch(async (err: unknown) => {
          // The next attempt stores the video again: this copy would be nobody's.
          await media.discard([saved.id]).catch(() => undefined);
          throw err;
        })
      : null;
    // Cancelled (or timed out) while the result was fetched: the job ended without these media.
    if (!(await finisher.complete(job.id, saved.id, thumbnail?.id ?? null))) await media.discard(thumbnail ? [saved.id, thumbnail.id] : [saved.id]);
  };

  /** Tells the upstream to stop a job that ended here; asked again while it cannot be reached, a few times. */
  cancelUpstream = async (item: WorkItem): Promise<void> => {
    const { jobs, queue, catalog, providers } = this.deps;
    const { queueId, routeId } = item.payload as Partial<UpstreamCancel>;
    const read = queueId ? await jobs.getWithTimeLeft(item.ref) : undefined;
    const model = read && catalog.find(read.job.model);
    if (!read || !model || !queueId) return queue.done(item);
    const { provider, upstreamModel } = providers.video(model, read.job.provider, routeId ?? read.job.routeId);
    try {
      await provider.cancel?.({ queueId, spec: { ...read.job.spec, upstreamModel } });
    } catch {
      if (item.attempts < CANCEL_ATTEMPTS) return queue.retryLater(item, this.deps.pollEverySeconds(read.job.provider));
    }
    await queue.done(item);
  };

  /** A change of progress is written and published; the same figure again costs nothing. */
  private async report(jobId: string, progress: number): Promise<void> {
    const changed = await this.deps.jobs.setProgress(jobId, Math.max(0, Math.min(99, Math.round(progress))));
    if (changed) await this.deps.events.publish({ job: changed }).catch(() => undefined);
  }

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
      // The job ended (its owner cancelled it) while the upstream was taking it: stop it there too.
      else await queue.schedule(tx, 'video_cancel', job.id, { queueId: submitted.queueId, routeId: submitted.routeId } satisfies UpstreamCancel);
    });
  }
}
