/**
 * The query strings of the two REST lists of an account's jobs, read into the page VideoService
 * lists: GET /v1/video/jobs (`status`, `first`, `after`, as GraphQL's videoJobs) and GET /v1/videos
 * (OpenAI's `limit`, `after`, `order`). Both are bounded by VIDEO_JOB_PAGE; each refusal names the
 * parameter as its request spells it.
 */
import { z } from 'zod';
import { integerTextOrNumber } from '../shared/integer-text';
import { parseInput } from '../shared/validate';
import type { VideoJobStatus } from './video-job';
import { VIDEO_JOB_ID, VIDEO_JOB_PAGE } from './video-service';

const cursor = z.string().regex(VIDEO_JOB_ID, 'must be the id of a job (vid_…)');

const jobsQuery = z.strictObject({
  status: z.enum(['PROCESSING', 'COMPLETED', 'FAILED']).optional(),
  first: integerTextOrNumber(1, VIDEO_JOB_PAGE.max).default(VIDEO_JOB_PAGE.byDefault),
  after: cursor.optional(),
});

const videosQuery = z.strictObject({
  limit: integerTextOrNumber(1, VIDEO_JOB_PAGE.max).default(VIDEO_JOB_PAGE.byDefault),
  after: cursor.optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
});

export function jobsPage(query: unknown): { first: number; after?: string; status?: VideoJobStatus } {
  return parseInput(jobsQuery, query);
}

export function videosPage(query: unknown): { first: number; after?: string; order: 'asc' | 'desc' } {
  const q = parseInput(videosQuery, query);
  return { first: q.limit, after: q.after, order: q.order };
}
