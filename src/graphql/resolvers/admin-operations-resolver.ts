import { Args, ArgsType, Ctx, Field, ID, Int, Query, Resolver } from 'type-graphql';
import { requireOperator, type GraphQLContext } from '../context';
import { AuditEntryConnection, DailyTotalType, UpstreamRouteType, toAuditConnection, toDailyTotalType, toUpstreamRouteType } from '../types/admin';
import { WebhookDeliveryType, toDeliveryType } from '../types/history';
import { AUDIT_PAGE } from '../../domain/operators/audit-log';
import { DELIVERY_PAGE, checkedPage, definedArgs } from '../page-args';

@ArgsType()
class DailyArgs {
  @Field(() => String, { nullable: true, description: 'First UTC day, YYYY-MM-DD (default: 29 days before `to`).' }) from?: string | null;
  @Field(() => String, { nullable: true, description: 'Last UTC day, YYYY-MM-DD, included (default: today).' }) to?: string | null;
}

@ArgsType()
class DeliveryArgs {
  @Field(() => ID, { nullable: true }) keyId?: string | null;
  @Field(() => ID, { nullable: true }) jobId?: string | null;
  @Field(() => Int, { nullable: true, description: '1 to 500 (default 100).' }) first?: number | null;
}

@ArgsType()
class AuditArgs {
  @Field(() => Int, { nullable: true, description: '1 to 100 (default 20).' }) first?: number | null;
  @Field(() => String, { nullable: true, description: 'pageInfo.endCursor of the previous page.' }) after?: string | null;
}

/** Operators' views of the whole service, each guarded by requireOperator: the same OperatorReads and AuditLog as /admin. */
@Resolver()
export class AdminOperationsResolver {
  @Query(() => [UpstreamRouteType], { description: 'Operators: GET /admin/upstreams, every route and its circuit.' })
  adminUpstreams(@Ctx() ctx: GraphQLContext): UpstreamRouteType[] {
    requireOperator(ctx);
    return ctx.services.operatorReads.upstreams().map(toUpstreamRouteType);
  }

  @Query(() => [DailyTotalType], { description: 'Operators: credits sold and spent per UTC day, every day of the range (at most 366), oldest first.' })
  async adminDailyTotals(@Args(() => DailyArgs) { from, to }: DailyArgs, @Ctx() ctx: GraphQLContext): Promise<DailyTotalType[]> {
    requireOperator(ctx);
    return (await ctx.services.operatorReads.dailyTotals(definedArgs({ from, to }))).days.map(toDailyTotalType);
  }

  @Query(() => [WebhookDeliveryType], {
    description: 'Operators: GET /admin/webhook-deliveries, the delivery log of a key, a job or both, newest first.',
    complexity: ({ args, childComplexity }) => 1 + DELIVERY_PAGE.size(args.first) * childComplexity,
  })
  async adminWebhookDeliveries(@Args(() => DeliveryArgs) { keyId, jobId, first }: DeliveryArgs, @Ctx() ctx: GraphQLContext): Promise<WebhookDeliveryType[]> {
    requireOperator(ctx);
    // Checked here so a refusal names the argument (`first`), not the domain's `limit`.
    const page = checkedPage(DELIVERY_PAGE, { first });
    return (await ctx.services.operatorReads.deliveries(definedArgs({ keyId, jobId, limit: page.first }))).map(toDeliveryType);
  }

  @Query(() => AuditEntryConnection, {
    description: 'Operators: GET /admin/audit, every operator action, newest first.',
    complexity: ({ args, childComplexity }) => 1 + AUDIT_PAGE.size(args.first) * childComplexity,
  })
  async auditLog(@Args(() => AuditArgs) { first, after }: AuditArgs, @Ctx() ctx: GraphQLContext): Promise<AuditEntryConnection> {
    requireOperator(ctx);
    return toAuditConnection(await ctx.services.audit.list(definedArgs({ first, after })));
  }
}
