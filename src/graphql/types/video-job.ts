import { Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import type { VideoJob } from '../../domain/video/video-job';
import { DateTimeScalar } from '../scalars';

export enum VideoJobStatus {
  PROCESSING = 'PROCESSING',
  COMPLETED = 'COMPLETED',
  FAILED = 'FAILED',
}
registerEnumType(VideoJobStatus, { name: 'VideoJobStatus' });

@ObjectType('VideoJob', { description: 'A video or motion-control job (CONTRACT.md).' })
export class VideoJobType {
  @Field(() => ID) id!: string;
  @Field(() => String) queueId!: string;
  @Field(() => String) model!: string;
  @Field(() => VideoJobStatus) status!: VideoJobStatus;
  @Field(() => Float, { description: 'What the job costs; a test job (testMode) costs this and moves no credit.' }) creditsCharged!: number;
  @Field(() => Boolean, { description: 'Queued with a test key: made by the simulator, and no credit moved (added beside CONTRACT).' }) testMode!: boolean;
  @Field(() => Float, { nullable: true }) creditsUsed!: number | null;
  @Field(() => Int, { description: "0 to 100: how far the job is, from its upstream's queue or logs (the simulator's own clock); 100 once COMPLETED." })
  progress!: number;
  @Field(() => String, { nullable: true, description: 'Present when COMPLETED: permanent, token-authenticated link.' }) url!: string | null;
  @Field(() => String, { nullable: true, description: 'Present when FAILED.' }) reason!: string | null;
  @Field(() => DateTimeScalar) createdAt!: Date;
  @Field(() => DateTimeScalar) updatedAt!: Date;
}

/** Field by field, so nothing of the job's internals (spec, provider, account) reaches the wire. */
export function toVideoJobType(job: VideoJob): VideoJobType {
  return {
    id: job.id,
    queueId: job.queueId || job.id,
    model: job.model,
    status: job.status as VideoJobStatus,
    creditsCharged: job.creditsCharged,
    testMode: job.testMode,
    creditsUsed: job.creditsUsed,
    progress: job.status === 'COMPLETED' ? 100 : job.progress,
    url: job.status === 'COMPLETED' ? job.url : null,
    reason: job.status === 'FAILED' ? job.reason : null,
    createdAt: job.createdAt,
    updatedAt: job.updatedAt,
  };
}

@ObjectType('VideoJobEdge')
export class VideoJobEdge {
  @Field(() => String, { description: 'Pass as `after` to read the jobs that follow this one.' }) cursor!: string;
  @Field(() => VideoJobType) node!: VideoJobType;
}

@ObjectType('PageInfo')
export class PageInfo {
  @Field(() => Boolean) hasNextPage!: boolean;
  @Field(() => String, { nullable: true }) endCursor!: string | null;
}

@ObjectType('VideoJobConnection', { description: "The account's jobs, newest first (Relay-style)." })
export class VideoJobConnection {
  @Field(() => [VideoJobEdge]) edges!: VideoJobEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
}

/** The cursor is the job id: the repository pages by (created_at, id) after that job. */
export function toConnection(page: { jobs: VideoJob[]; hasNextPage: boolean }): VideoJobConnection {
  const edges = page.jobs.map((job) => ({ cursor: job.id, node: toVideoJobType(job) }));
  return { edges, pageInfo: { hasNextPage: page.hasNextPage, endCursor: edges.at(-1)?.cursor ?? null } };
}
