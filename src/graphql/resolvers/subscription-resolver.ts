import { Arg, ID, Root, Subscription, Resolver } from 'type-graphql';
import type { VideoJob } from '../../domain/video/video-job';
import { requireAccountId, type GraphQLContext } from '../context';
import { JobStream } from '../job-stream';
import { VideoJobType, toVideoJobType } from '../types/video-job';

/** Events a slow subscriber may fall behind by before its stream ends with an error. */
const MAX_BUFFERED_EVENTS = 100;

/**
 * One job: subscribe first (events are buffered), then read the current state, so a change that
 * lands between the two is neither lost nor delivered out of order. Another account's job is a
 * not_found_error, as on REST, and nothing stays subscribed.
 */
export async function watchJob(ctx: GraphQLContext, jobId: string): Promise<JobStream> {
  const accountId = requireAccountId(ctx);
  const stream = new JobStream(ctx.services.events, {
    scope: { accountId, jobId },
    accept: (job) => job.id === jobId && job.accountId === accountId,
    maxBuffer: MAX_BUFFERED_EVENTS,
    singleJob: true,
    // After a Redis outage the terminal event may have been published while we were cut off.
    resync: () => ctx.services.video.get(accountId, jobId),
  });
  try {
    stream.startWith(await ctx.services.video.get(accountId, jobId));
    return stream;
  } catch (err) {
    await stream.return();
    throw err;
  }
}

/** Every change to any job of the caller's account, from whichever instance made it. */
export function watchAccountJobs(ctx: GraphQLContext): JobStream {
  const accountId = requireAccountId(ctx);
  return new JobStream(ctx.services.events, {
    scope: { accountId },
    accept: (job) => job.accountId === accountId,
    maxBuffer: MAX_BUFFERED_EVENTS,
    // After a Redis outage: the changes other instances published while this one was cut off.
    resyncChanged: (since) => ctx.services.video.changedSince(accountId, since),
  });
}

@Resolver()
export class SubscriptionResolver {
  @Subscription(() => VideoJobType, {
    description: 'The current state at once, then each change; completes after COMPLETED or FAILED.',
    subscribe: ({ args, context }) => watchJob(context as GraphQLContext, String((args as { id: unknown }).id)),
  })
  videoJobUpdated(@Root() job: VideoJob, @Arg('id', () => ID) _id: string): VideoJobType {
    return toVideoJobType(job);
  }

  @Subscription(() => VideoJobType, {
    description: "Every change to the caller's account's jobs.",
    subscribe: ({ context }) => watchAccountJobs(context as GraphQLContext),
  })
  videoJobsUpdated(@Root() job: VideoJob): VideoJobType {
    return toVideoJobType(job);
  }
}
