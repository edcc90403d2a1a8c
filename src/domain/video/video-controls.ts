/**
 * What an owner does to a job after queueing it: cancel it while it runs, delete it once it has
 * ended, download what it made. Any key of the account may, or the owner's ID token; a key must
 * also be allowed the job's model, as it would be to queue it.
 */
import { z } from 'zod';
import { DomainError, notFound } from '../errors/domain-error';
import { parseInput } from '../shared/validate';
import type { Principal } from '../keys/principal';
import { assertModelAllowed } from '../keys/permissions';
import type { BlobHandle } from '../ports/blob-store';
import type { MediaLibrary } from '../media/media-library';
import type { JobFinisher } from './job-finisher';
import type { VideoJob } from './video-job';
import type { VideoJobRepository } from './video-job-repository';
import type { VideoService } from './video-service';

export type ContentVariant = 'video' | 'thumbnail';

const notCancellable = (job: VideoJob) =>
  new DomainError('video_not_cancellable', `The video job '${job.id}' is already ${job.status}; only a PROCESSING job can be cancelled.`, {
    code: 'video_not_cancellable',
  });

export class VideoControls {
  constructor(
    private readonly deps: {
      video: VideoService;
      jobs: VideoJobRepository;
      finisher: JobFinisher;
      media: MediaLibrary;
      /** Wakes the local worker: a cancel may have an upstream call to make. */
      nudge: () => void;
    },
  ) {}

  /**
   * Ends a PROCESSING job FAILED with reason `cancelled`, refunded once and webhooked as any
   * failure, and has the upstream told to stop it. The finisher's one transaction decides a race
   * with the job's completion: whichever locks the row first ends it, and a cancel that comes
   * second is refused as for any terminal job.
   */
  async cancel(who: Principal, jobId: string): Promise<VideoJob> {
    const job = await this.owned(who, jobId);
    if (job.status !== 'PROCESSING') throw notCancellable(job);
    const cancelled = await this.deps.finisher.cancel(job.id);
    if (!cancelled) throw notCancellable(await this.deps.video.get(who.accountId, jobId));
    this.deps.nudge();
    return cancelled;
  }

  /**
   * Deletes an ended job from every view, with its video and thumbnail; nothing is refunded (its
   * ledger entries stay, naming it). A job still PROCESSING is refused: cancel it first.
   */
  async remove(who: Principal, jobId: string): Promise<VideoJob> {
    const job = await this.owned(who, jobId);
    if (job.status === 'PROCESSING') {
      throw new DomainError('video_not_deletable', `The video job '${job.id}' is still PROCESSING; cancel it first, or delete it once it has ended.`, {
        code: 'video_not_deletable',
      });
    }
    const removed = await this.deps.jobs.remove(job.id, who.accountId);
    if (!removed) throw notFound(`No video job with id '${jobId}'.`, 'job_not_found', ['id']);
    const media = [removed.mediaId, removed.thumbnailMediaId].filter((id): id is string => id !== null);
    await this.deps.media.discard(media);
    return removed;
  }

  /** A completed job's video or thumbnail, opened for streaming. */
  async content(accountId: string, jobId: string, variant: ContentVariant): Promise<{ blob: BlobHandle; contentType: string }> {
    const job = await this.deps.video.get(accountId, jobId);
    if (job.status !== 'COMPLETED') {
      throw notFound(`The video job '${job.id}' is ${job.status}: its content exists once it is COMPLETED.`, 'video_not_ready', ['id']);
    }
    const mediaId = variant === 'video' ? job.mediaId : job.thumbnailMediaId;
    const stored = mediaId ? await this.deps.media.openStored(mediaId) : null;
    if (!stored) throw notFound(`The video job '${job.id}' has no ${variant}.`, 'content_not_found', ['variant']);
    return stored;
  }

  private async owned(who: Principal, jobId: string): Promise<VideoJob> {
    const job = await this.deps.video.get(who.accountId, jobId);
    if (who.kind === 'key') assertModelAllowed(who, job.model);
    return job;
  }
}

const contentQuery = z.strictObject({ variant: z.enum(['video', 'thumbnail']).default('video') });

/** The content endpoint's query: `variant`, the video by default, or its thumbnail. */
export function contentVariant(query: unknown): ContentVariant {
  return parseInput(contentQuery, query).variant;
}
