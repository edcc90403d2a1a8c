import { Arg, Args, ArgsType, Ctx, Field, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { requireAccountId, requireKey, requirePrincipal, type GraphQLContext } from '../context';
import { VideoJobConnection, VideoJobStatus, VideoJobType, toConnection, toVideoJobType } from '../types/video-job';
import { VIDEO_JOB_PAGE, checkedPage } from '../page-args';
import { MotionControlInput, QueueVideoInput, motionBody, queueBody } from '../types/inputs';
import { IdempotencyService, type IdempotentCall } from '../../domain/idempotency/idempotency-service';
import type { VideoJob } from '../../domain/video/video-job';

const IDEMPOTENCY_DOC =
  'As the Idempotency-Key header of REST: the same key with the same input answers the same job, queued and charged once (24 hours, per API key).';

/** An ArgsType (not three @Arg) so the SDL lists the arguments in this order. */
@ArgsType()
class VideoJobsArgs {
  @Field(() => Int, { nullable: true }) first?: number | null;
  @Field(() => String, { nullable: true, description: 'The cursor of the last job of the previous page.' }) after?: string | null;
  @Field(() => VideoJobStatus, { nullable: true }) status?: VideoJobStatus | null;
}

/** The asynchronous video API: the same VideoService calls as /v1/video/*. */
@Resolver()
export class VideoResolver {
  @Query(() => VideoJobType, { nullable: true, description: "A job of the caller's account; another account's answers not_found_error." })
  async videoJob(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<VideoJobType> {
    return toVideoJobType(await ctx.services.video.get(requireAccountId(ctx), id));
  }

  @Query(() => VideoJobConnection, {
    description: "The account's jobs, newest first; `first` is 1 to 100 (default 20).",
    // The cost bound counts each page slot, so a 100-job page weighs 100 nodes.
    complexity: ({ args, childComplexity }) => 1 + VIDEO_JOB_PAGE.size(args.first) * childComplexity,
  })
  async videoJobs(@Args(() => VideoJobsArgs) { first, after, status }: VideoJobsArgs, @Ctx() ctx: GraphQLContext): Promise<VideoJobConnection> {
    const accountId = requireAccountId(ctx);
    const page = await ctx.services.video.list(accountId, { ...checkedPage(VIDEO_JOB_PAGE, { first, after }), status: status ?? undefined });
    return toConnection(page);
  }

  @Mutation(() => VideoJobType, { description: 'POST /v1/video/queue: charged in full when accepted.' })
  async queueVideo(
    @Arg('input', () => QueueVideoInput) input: QueueVideoInput,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_DOC }) idempotencyKey: string | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): Promise<VideoJobType> {
    const key = requireKey(ctx);
    const body = queueBody(input);
    return toVideoJobType(await once(ctx, idempotencyKey, 'queueVideo', body, async (call) => (await ctx.services.video.queue(key, body, call)).job));
  }

  @Mutation(() => VideoJobType, {
    description:
      "POST /v1/video/cancel: a PROCESSING job ends FAILED with reason cancelled, refunded once; a terminal one answers video_not_cancellable. An API key (allowed the job's model) or the owner's ID token.",
  })
  async cancelVideoJob(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<VideoJobType> {
    return toVideoJobType(await ctx.services.videoControls.cancel(requirePrincipal(ctx), id));
  }

  @Mutation(() => VideoJobType, { description: 'POST /v1/video/motion-control.' })
  async queueMotionControl(
    @Arg('input', () => MotionControlInput) input: MotionControlInput,
    @Arg('idempotencyKey', () => String, { nullable: true, description: IDEMPOTENCY_DOC }) idempotencyKey: string | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): Promise<VideoJobType> {
    const key = requireKey(ctx);
    const body = motionBody(input);
    return toVideoJobType(
      await once(ctx, idempotencyKey, 'queueMotionControl', body, async (call) => (await ctx.services.video.motionControl(key, body, call)).job),
    );
  }
}

/** Queues once per idempotency key: a repeat answers the job the first call created, as it is now. */
async function once(
  ctx: GraphQLContext,
  idempotencyKey: string | null | undefined,
  operation: string,
  body: object,
  queue: (call?: IdempotentCall) => Promise<VideoJob>,
): Promise<VideoJob> {
  const key = requireKey(ctx);
  const idem = IdempotencyService.parseKey(idempotencyKey ?? undefined, 'idempotencyKey');
  if (idem === undefined) return queue();
  const fingerprint = IdempotencyService.fingerprint('graphql', operation, body);
  return ctx.services.idempotency.once(key.keyId, idem, fingerprint, queue, {
    encode: (job) => ({ jobId: job.id }),
    decode: (stored: { jobId: string }) => ctx.services.video.get(key.accountId, stored.jobId),
  });
}
