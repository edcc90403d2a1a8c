import { Arg, Ctx, Query, Resolver } from 'type-graphql';
import { requireAccountId, requireKey, type GraphQLContext } from '../context';
import { ModelType, toModelType } from '../types/model';
import { VideoQuoteType, toVideoQuoteType } from '../types/quote';
import { VideoQuoteInput, quoteBody } from '../types/inputs';

/** GET /v1/models and POST /v1/video/quote: API-key powers, not counted by rate limits. */
@Resolver()
export class CatalogResolver {
  @Query(() => [ModelType], {
    description: 'Every model: chat, image, image editing, video and motion control. Either credential: the owner picks key permissions from it.',
  })
  models(@Ctx() ctx: GraphQLContext): ModelType[] {
    requireAccountId(ctx);
    const { catalog } = ctx.services;
    return catalog.records.map((r) => toModelType(catalog, r));
  }

  @Query(() => VideoQuoteType, { description: 'The credit cost of a video or motion-control job before queueing it.' })
  videoQuote(@Arg('input', () => VideoQuoteInput) input: VideoQuoteInput, @Ctx() ctx: GraphQLContext): VideoQuoteType {
    return toVideoQuoteType(ctx.services.video.quote(requireKey(ctx), quoteBody(input)));
  }
}
