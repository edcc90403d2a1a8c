import type { Database } from '../ports/database';
import type { Catalog } from '../catalog/catalog';
import type { MediaLibrary } from '../media/media-library';
import type { WorkItem, WorkQueue } from '../work/work-queue';
import { DomainError } from '../errors/domain-error';
import type { ProviderRegistry } from '../../providers/provider-registry';
import type { VideoJobRepository } from './video-job-repository';
import type { JobFinisher } from './job-finisher';

export const TIMEOUT_REASON = 'timeout';

/**
 * The `video_poll` work handler: asks the provider where a job is and moves it on. It keeps no
 * state of its own (the job row and the provider's queue id are the record), so after a crash
 * any instance picks the row up again and carries on.
 */
export class VideoJobRunner {
  constructor(
    private readonly deps: {
      db: Database;
      catalog: Catalog;
      providers: ProviderRegistry;
      jobs: VideoJobRepository;
      queue: WorkQueue;
      finisher: JobFinisher;
      media: MediaLibrary;
      pollEverySeconds: (provider: string) => number;
    },
  ) {}

  handle = async (item: WorkItem): Promise<void> => {
    const { db, jobs, queue, finisher } = this.deps;
    const job = await jobs.get(db, item.ref);
    if (!job || job.status !== 'PROCESSING') {
      await queue.done(db, item);
      return;
    }
    if (Date.now() >= job.deadlineAt.getTime()) {
      await finisher.fail(job.id, TIMEOUT_REASON);
      return;
    }
    const model = this.deps.catalog.find(job.model);
    if (!model) {
      await finisher.fail(job.id, 'The model of this job is no longer offered.');
      return;
    }
    const provider = this.deps.providers.video(model, job.provider);
    const later = Math.min(this.deps.pollEverySeconds(job.provider), Math.max(0.05, (job.deadlineAt.getTime() - Date.now()) / 1000));

    if (!job.queueId || !job.submittedAt) {
      // The instance that accepted the job died before recording the provider's queue id.
      try {
        const { queueId } = await provider.submit(job.spec);
        await db.transaction((tx) => jobs.setSubmitted(tx, job.id, queueId));
      } catch (err) {
        if (err instanceof DomainError && err.type !== 'upstream_error') await finisher.fail(job.id, err.message);
        else await db.transaction((tx) => queue.retryLater(tx, item, later));
      }
      return;
    }

    const result = await provider.poll({ queueId: job.queueId, submittedAt: job.submittedAt, spec: job.spec });
    if (result.state === 'processing') {
      await queue.retryLater(db, item, later);
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
}
