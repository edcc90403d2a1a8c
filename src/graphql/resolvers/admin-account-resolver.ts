import { Args, ArgsType, Ctx, Field, FieldResolver, Float, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { requireOperator, type GraphQLContext } from '../context';
import { AdminAccountConnection, AdminAccountType, toAdminAccountConnection, toAdminAccountType } from '../types/admin';
import { ApiKeyType, toApiKeyType } from '../types/account';
import { LedgerEntryConnection, toLedgerConnection } from '../types/history';
import { ACCOUNT_PAGE } from '../../domain/operators/operator-reads';
import { PurchaseConnection, toPurchaseConnection } from '../types/purchase';
import { LEDGER_PAGE, PURCHASE_PAGE, definedArgs } from '../page-args';
import { namingArgument } from '../argument-names';

@ArgsType()
class AccountsArgs {
  @Field(() => String, { nullable: true, description: "An account id (exact) or part of an identity's subject (any case)." }) search?: string | null;
  @Field(() => Int, { nullable: true, description: '1 to 100 (default 20).' }) first?: number | null;
  @Field(() => String, { nullable: true, description: 'pageInfo.endCursor of the previous page.' }) after?: string | null;
}

@ArgsType()
class IdArgs {
  @Field(() => ID) id!: string;
}

@ArgsType()
class GrantArgs {
  @Field(() => ID) accountId!: string;
  @Field(() => Float, { description: 'Credits to grant; negative takes credits back, never below zero.' }) credits!: number;
  @Field(() => String, { description: 'Why: one line, 1 to 500 characters; kept on the ledger entry and in the audit log.' }) reason!: string;
}

@ArgsType()
class MemberArgs {
  @Field(() => ID) accountId!: string;
  @Field(() => Boolean) member!: boolean;
}

@ArgsType()
class PageArgs {
  @Field(() => Int, { nullable: true, description: '1 to 100 (default 20).' }) first?: number | null;
  @Field(() => String, { nullable: true, description: 'pageInfo.endCursor of the previous page.' }) after?: string | null;
}

/**
 * Operators' view of any account: the same services as /admin and the owner's own operations,
 * each root field and each field below guarded by requireOperator; changes are OperatorActions,
 * audited in their transaction.
 */
@Resolver(() => AdminAccountType)
export class AdminAccountResolver {
  @Query(() => AdminAccountConnection, {
    description: 'Operators: accounts newest first, by id or subject.',
    complexity: ({ args, childComplexity }) => 1 + ACCOUNT_PAGE.size(args.first) * childComplexity,
  })
  async adminAccounts(@Args(() => AccountsArgs) { search, first, after }: AccountsArgs, @Ctx() ctx: GraphQLContext): Promise<AdminAccountConnection> {
    requireOperator(ctx);
    return toAdminAccountConnection(await ctx.services.operatorReads.accounts(definedArgs({ search, first, after })));
  }

  @Query(() => AdminAccountType, { description: 'Operators: any account; an unknown id is not_found_error.' })
  async adminAccount(@Args(() => IdArgs) { id }: IdArgs, @Ctx() ctx: GraphQLContext): Promise<AdminAccountType> {
    requireOperator(ctx);
    return toAdminAccountType(await namingArgument(ctx.services.operatorReads.account(id), 'accountId', 'id'));
  }

  @Mutation(() => AdminAccountType, { description: 'Operators: POST /admin/accounts/{id}/credits; audited.' })
  async adminGrantCredits(@Args(() => GrantArgs) { accountId, credits, reason }: GrantArgs, @Ctx() ctx: GraphQLContext): Promise<AdminAccountType> {
    const actor = requireOperator(ctx);
    return toAdminAccountType(await ctx.services.operatorActions.grantCredits(actor, accountId, { credits, reason }));
  }

  @Mutation(() => AdminAccountType, { description: 'Operators: PATCH /admin/accounts/{id} { member }; audited.' })
  async adminSetMember(@Args(() => MemberArgs) { accountId, member }: MemberArgs, @Ctx() ctx: GraphQLContext): Promise<AdminAccountType> {
    const actor = requireOperator(ctx);
    return toAdminAccountType(await ctx.services.operatorActions.setMember(actor, accountId, { member }));
  }

  @FieldResolver(() => [ApiKeyType], { description: "The account's active keys, never a secret." })
  async keys(@Root() account: AdminAccountType, @Ctx() ctx: GraphQLContext): Promise<ApiKeyType[]> {
    requireOperator(ctx);
    const keys = await ctx.services.keys.list(account.id);
    const spending = await ctx.services.spending.of(keys);
    return keys.map((k) => toApiKeyType(k, spending.get(k.id)!));
  }

  @FieldResolver(() => LedgerEntryConnection, {
    description: "The account's statement, newest first, as its owner reads it.",
    complexity: ({ args, childComplexity }) => 1 + LEDGER_PAGE.size(args.first) * childComplexity,
  })
  async ledger(
    @Root() account: AdminAccountType,
    @Args(() => PageArgs) { first, after }: PageArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<LedgerEntryConnection> {
    requireOperator(ctx);
    return toLedgerConnection(await ctx.services.history.ledger(account.id, definedArgs({ first, after })));
  }

  @FieldResolver(() => PurchaseConnection, {
    description: "The account's purchases of credits, newest first, as GET /account/purchases lists them.",
    complexity: ({ args, childComplexity }) => 1 + PURCHASE_PAGE.size(args.first) * childComplexity,
  })
  async purchases(
    @Root() account: AdminAccountType,
    @Args(() => PageArgs) { first, after }: PageArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<PurchaseConnection> {
    requireOperator(ctx);
    return toPurchaseConnection(await ctx.services.purchases.list(account.id, definedArgs({ first, after })));
  }
}
