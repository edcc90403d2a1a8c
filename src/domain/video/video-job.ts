import type { VideoJobSpec } from './video-port';
import { unixSeconds } from '../shared/time';

export type VideoJobStatus = 'PROCESSING' | 'COMPLETED' | 'FAILED';

/** A video or motion-control job as the domain sees it (credits, not micro-credits). */
export interface VideoJob {
  id: string;
  accountId: string;
  apiKeyId: string;
  testMode: boolean;
  model: string;
  kind: 'video' | 'motion-control';
  provider: string;
  /** The upstream route that accepted the job (null before its submission, and for the simulator). */
  routeId: string | null;
  spec: VideoJobSpec;
  queueId: string;
  status: VideoJobStatus;
  creditsCharged: number;
  creditsUsed: number | null;
  /** 0 to 100: what the upstream last reported (or, for the simulator, its clock says); 100 once COMPLETED. */
  progress: number;
  url: string | null;
  /** The stored video and its thumbnail image, once COMPLETED (a provider may give no thumbnail). */
  mediaId: string | null;
  thumbnailMediaId: string | null;
  reason: string | null;
  submittedAt: Date | null;
  /** When it became COMPLETED or FAILED. */
  finishedAt: Date | null;
  deadlineAt: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** SPEC's retrieve shape, by state. */
export function retrieveView(job: VideoJob): Record<string, unknown> {
  if (job.status === 'COMPLETED') return { id: job.id, status: job.status, url: job.url, credits_used: job.creditsUsed };
  if (job.status === 'FAILED') return { id: job.id, status: job.status, reason: job.reason };
  return { id: job.id, status: job.status, progress: job.progress };
}

/**
 * SPEC's queue / motion-control response. The job is submitted upstream by the worker after the
 * response, so at queue time `queue_id` is the gateway's own queue entry (the job id) unless the
 * provider's id is already known.
 */
export function acceptedView(job: VideoJob): Record<string, unknown> {
  return { id: job.id, queue_id: job.queueId || job.id, model: job.model, status: job.status, credits_charged: job.creditsCharged };
}

/** A job in a list (GET /v1/video/jobs): what retrieve shows of it in any state, and what it cost. */
export function listedView(job: VideoJob): Record<string, unknown> {
  return {
    id: job.id,
    queue_id: job.queueId || job.id,
    model: job.model,
    status: job.status,
    progress: job.status === 'COMPLETED' ? 100 : job.progress,
    credits_charged: job.creditsCharged,
    credits_used: job.creditsUsed,
    url: job.status === 'COMPLETED' ? job.url : null,
    reason: job.status === 'FAILED' ? job.reason : null,
    test_mode: job.testMode,
    created_at: unixSeconds(job.createdAt),
    updated_at: unixSeconds(job.updatedAt),
  };
}
