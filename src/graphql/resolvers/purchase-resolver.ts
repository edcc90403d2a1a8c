import { Arg, Args, ArgsType, Ctx, Field, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { requireAccount, type GraphQLContext } from '../context';
import { PURCHASE_PAGE, definedArgs } from '../page-args';
import {
  CheckoutSessionType,
  CreditPriceType,
  CreditQuoteType,
  PurchaseConnection,
  PurchaseType,
  toCheckoutSessionType,
  toCreditPriceType,
  toCreditQuoteType,
  toPurchaseConnection,
  toPurchaseType,
} from '../types/purchase';

@ArgsType()
class PurchasesArgs {
  @Field(() => Int, { nullable: true, description: '1 to 100 (default 20).' }) first?: number | null;
  @Field(() => String, { nullable: true, description: 'pageInfo.endCursor of the previous page.' }) after?: string | null;
}

/** Buying credits: the same PurchaseService calls as POST /account/checkout and GET /account/purchases. */
@Resolver()
export class PurchaseResolver {
  @Query(() => CreditPriceType, {
    nullable: true,
    description: 'The price per credit, the member multiplier and the bounds of one checkout; null when buying credits is off.',
  })
  creditPrice(@Ctx() ctx: GraphQLContext): CreditPriceType | null {
    requireAccount(ctx);
    const price = ctx.services.purchases.creditPrice();
    return price ? toCreditPriceType(price) : null;
  }

  @Query(() => CreditQuoteType, {
    description: 'What createCheckout(credits) would charge and grant the caller, refused as it would be; not_found_error when buying is off.',
  })
  async creditQuote(@Arg('credits', () => Int) credits: number, @Ctx() ctx: GraphQLContext): Promise<CreditQuoteType> {
    return toCreditQuoteType(await ctx.services.purchases.quote(requireAccount(ctx).accountId, { credits }));
  }

  @Query(() => PurchaseType, { description: "One of the account's purchases (its Checkout Session's id); not_found_error for any other." })
  async purchase(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<PurchaseType> {
    return toPurchaseType(await ctx.services.purchases.get(requireAccount(ctx).accountId, id));
  }

  @Query(() => PurchaseConnection, {
    description: "The account's purchases of credits, newest first.",
    complexity: ({ args, childComplexity }) => 1 + PURCHASE_PAGE.size(args.first) * childComplexity,
  })
  async purchases(@Args(() => PurchasesArgs) { first, after }: PurchasesArgs, @Ctx() ctx: GraphQLContext): Promise<PurchaseConnection> {
    return toPurchaseConnection(await ctx.services.purchases.list(requireAccount(ctx).accountId, definedArgs({ first, after })));
  }

  @Mutation(() => CheckoutSessionType, {
    description: "POST /account/checkout: a Stripe Checkout page for whole credits (a member's 1.55 times as many); not_found_error when buying is off.",
  })
  async createCheckout(@Arg('credits', () => Int) credits: number, @Ctx() ctx: GraphQLContext): Promise<CheckoutSessionType> {
    return toCheckoutSessionType(await ctx.services.purchases.checkout(requireAccount(ctx).accountId, { credits }));
  }
}
