import { Arg, Args, ArgsType, Ctx, Field, ID, Int, Query, Resolver } from 'type-graphql';
import { requireAccount, type GraphQLContext } from '../context';
import { LedgerEntryConnection, UsageGroupBy, UsageType, WebhookDeliveryType, toDeliveryType, toLedgerConnection, toUsageType } from '../types/history';
import { DELIVERY_PAGE, LEDGER_PAGE, checkedPage, definedArgs } from '../page-args';
import { namingArgument } from '../argument-names';

@ArgsType()
class UsageArgs {
  @Field(() => String, { nullable: true, description: 'First UTC day, YYYY-MM-DD (default: 29 days before `to`).' }) from?: string | null;
  @Field(() => String, { nullable: true, description: 'Last UTC day, YYYY-MM-DD, included (default: today).' }) to?: string | null;
  @Field(() => UsageGroupBy, { nullable: true, description: 'DAY (default), or split each day by KEY or MODEL.' }) groupBy?: UsageGroupBy | null;
}

@ArgsType()
class LedgerArgs {
  @Field(() => Int, { nullable: true, description: '1 to 100 (default 20).' }) first?: number | null;
  @Field(() => String, { nullable: true, description: 'pageInfo.endCursor of the previous page.' }) after?: string | null;
}

@ArgsType()
class DeliveriesArgs {
  @Field(() => ID) keyId!: string;
  @Field(() => Int, { nullable: true, description: '1 to 500 (default 100).' }) first?: number | null;
}

/** The account's past: the same AccountHistory calls as GET /account/usage, /account/ledger-entries and the delivery log. */
@Resolver()
export class HistoryResolver {
  @Query(() => UsageType, { description: 'GET /account/usage: credits spent per UTC day, from the ledger.' })
  async usage(@Args(() => UsageArgs) { from, to, groupBy }: UsageArgs, @Ctx() ctx: GraphQLContext): Promise<UsageType> {
    const accountId = requireAccount(ctx).accountId;
    return toUsageType(await ctx.services.history.usage(accountId, definedArgs({ from, to, group_by: groupBy })));
  }

  @Query(() => LedgerEntryConnection, {
    description: 'The ledger, newest first.',
    complexity: ({ args, childComplexity }) => 1 + LEDGER_PAGE.size(args.first) * childComplexity,
  })
  async ledgerEntries(@Args(() => LedgerArgs) { first, after }: LedgerArgs, @Ctx() ctx: GraphQLContext): Promise<LedgerEntryConnection> {
    const accountId = requireAccount(ctx).accountId;
    return toLedgerConnection(await ctx.services.history.ledger(accountId, definedArgs({ first, after })));
  }

  @Query(() => [WebhookDeliveryType], {
    description: "A key's webhook delivery attempts, newest first; another account's key answers not_found_error.",
    complexity: ({ args, childComplexity }) => 1 + DELIVERY_PAGE.size(args.first) * childComplexity,
  })
  async webhookDeliveries(@Args(() => DeliveriesArgs) { keyId, first }: DeliveriesArgs, @Ctx() ctx: GraphQLContext): Promise<WebhookDeliveryType[]> {
    const accountId = requireAccount(ctx).accountId;
    // Checked here so a refusal names the argument (`first`), not the domain's `limit`.
    const page = checkedPage(DELIVERY_PAGE, { first });
    return (await namingArgument(ctx.services.history.deliveries(accountId, keyId, { limit: page.first }), 'id', 'keyId')).map(toDeliveryType);
  }

  @Query(() => [WebhookDeliveryType], {
    description: "The delivery attempts of the account's own events (balance.low, …), newest first.",
    complexity: ({ args, childComplexity }) => 1 + DELIVERY_PAGE.size(args.first) * childComplexity,
  })
  async accountWebhookDeliveries(
    @Arg('first', () => Int, { nullable: true, description: '1 to 500 (default 100).' }) first: number | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): Promise<WebhookDeliveryType[]> {
    const page = checkedPage(DELIVERY_PAGE, { first });
    return (await ctx.services.history.accountDeliveries(requireAccount(ctx).accountId, { limit: page.first })).map(toDeliveryType);
  }
}
