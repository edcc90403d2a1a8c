import { Arg, Args, ArgsType, Ctx, Field, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { requireAccountId, requireKey, type GraphQLContext } from '../context';
import { VideoJobConnection, VideoJobStatus, VideoJobType, pageSize, toConnection, toVideoJobType } from '../types/video-job';
import { MotionControlInput, QueueVideoInput, motionBody, queueBody } from '../types/inputs';

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
    complexity: ({ args, childComplexity }) => 1 + pageSize(args.first) * childComplexity,
  })
  async videoJobs(@Args(() => VideoJobsArgs) { first, after, status }: VideoJobsArgs, @Ctx() ctx: GraphQLContext): Promise<VideoJobConnection> {
    const page = await ctx.services.video.list(requireAccountId(ctx), {
      first: pageSize(first),
      after: after ?? undefined,
      status: status ?? undefined,
    });
    return toConnection(page);
  }

  @Mutation(() => VideoJobType, { description: 'POST /v1/video/queue: charged in full when accepted.' })
  async queueVideo(@Arg('input', () => QueueVideoInput) input: QueueVideoInput, @Ctx() ctx: GraphQLContext): Promise<VideoJobType> {
    const { job } = await ctx.services.video.queue(requireKey(ctx), queueBody(input));
    return toVideoJobType(job);
  }

  @Mutation(() => VideoJobType, { description: 'POST /v1/video/motion-control.' })
  async queueMotionControl(@Arg('input', () => MotionControlInput) input: MotionControlInput, @Ctx() ctx: GraphQLContext): Promise<VideoJobType> {
    const { job } = await ctx.services.video.motionControl(requireKey(ctx), motionBody(input));
    return toVideoJobType(job);
  }
}
