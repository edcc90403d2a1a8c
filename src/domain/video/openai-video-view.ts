/**
 * A job as OpenAI's Videos API shows it (`client.videos.retrieve`, `list`, `create`): the same job
 * /v1/video/* and GraphQL show, in OpenAI's words. A job not yet handed to its provider is
 * `queued`, one the provider has is `in_progress`; times are Unix seconds; media URLs are
 * permanent, so nothing expires (`expires_at` is null).
 */
import { unixSeconds } from '../shared/time';
import { CANCELLED_REASON } from './job-finisher';
import { TIMEOUT_REASON } from './video-job-runner';
import type { VideoJob } from './video-job';
import { toSize } from './video-sizes';

export type OpenAIVideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

/** The `error` of a failed job: a code a program can act on, and the job's reason in words. */
function errorOf(job: VideoJob): { code: string; message: string } | null {
  if (job.status !== 'FAILED') return null;
  if (job.reason === CANCELLED_REASON) return { code: 'cancelled', message: 'The video job was cancelled.' };
  if (job.reason === TIMEOUT_REASON) return { code: 'timeout', message: 'The video job did not finish before its deadline.' };
  return { code: 'video_generation_failed', message: job.reason ?? 'The video could not be generated.' };
}

export function openAIStatus(job: VideoJob): OpenAIVideoStatus {
  if (job.status === 'COMPLETED') return 'completed';
  if (job.status === 'FAILED') return 'failed';
  return job.submittedAt ? 'in_progress' : 'queued';
}

const seconds = (d: Date | null) => (d ? unixSeconds(d) : null);

export function videoObject(job: VideoJob): Record<string, unknown> {
  return {
    id: job.id,
    object: 'video',
    model: job.model,
    status: openAIStatus(job),
    progress: job.status === 'COMPLETED' ? 100 : job.progress,
    created_at: unixSeconds(job.createdAt),
    completed_at: seconds(job.finishedAt),
    expires_at: null,
    seconds: String(job.spec.durationSeconds),
    size: toSize(job.spec.resolution, job.spec.aspectRatio),
    prompt: job.spec.prompt ?? null,
    remixed_from_video_id: null,
    error: errorOf(job),
  };
}

/** A page as OpenAI's cursor lists answer it: the SDK pages on with `after` = `last_id` while `has_more`. */
export function videoList(page: { jobs: VideoJob[]; hasNextPage: boolean }): Record<string, unknown> {
  const data = page.jobs.map(videoObject);
  return { object: 'list', data, first_id: page.jobs[0]?.id ?? null, last_id: page.jobs.at(-1)?.id ?? null, has_more: page.hasNextPage };
}

/** `{ id, object, deleted }`, as OpenAI confirms a deletion. */
export function deletedVideo(job: VideoJob): Record<string, unknown> {
  return { id: job.id, object: 'video.deleted', deleted: true };
}
