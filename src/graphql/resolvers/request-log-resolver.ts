import { Args, ArgsType, Ctx, Field, ID, Int, Query, Resolver, registerEnumType } from 'type-graphql';
import { requireAccount, type GraphQLContext } from '../context';
import { RequestLogConnection, toRequestLogConnection } from '../types/request-log';
import { REQUEST_LOG_PAGE, definedArgs } from '../page-args';

/** REST's `outcome=ok|error`. */
enum RequestOutcome {
  OK = 'ok',
  ERROR = 'error',
}
registerEnumType(RequestOutcome, {
  name: 'RequestOutcome',
  valuesConfig: { OK: { description: 'Answered with a status below 400.' }, ERROR: { description: 'Answered with 400 or above (499: the client left).' } },
});

@ArgsType()
class RequestsArgs {
  @Field(() => ID, { nullable: true, description: 'Only the calls of this key (of the account).' }) keyId?: string | null;
  @Field(() => String, { nullable: true }) model?: string | null;
  @Field(() => Int, { nullable: true, description: 'Only the calls answered with this HTTP status.' }) status?: number | null;
  @Field(() => RequestOutcome, { nullable: true, description: 'Only the calls that succeeded (OK) or failed (ERROR).' }) outcome?: RequestOutcome | null;
  @Field(() => String, { nullable: true, description: 'From this moment (RFC 3339, Unix seconds, or a UTC day: its start).' }) from?: string | null;
  @Field(() => String, { nullable: true, description: 'Up to this moment, included (a UTC day: its end).' }) to?: string | null;
  @Field(() => Int, { nullable: true, description: '1 to 100 (default 20).' }) first?: number | null;
  @Field(() => String, { nullable: true, description: 'pageInfo.endCursor of the previous page.' }) after?: string | null;
}

/** The request log: the same RequestLog call as GET /account/requests. */
@Resolver()
export class RequestLogResolver {
  @Query(() => RequestLogConnection, {
    description: "The account's /v1 calls that named a model, newest first.",
    complexity: ({ args, childComplexity }) => 1 + REQUEST_LOG_PAGE.size(args.first) * childComplexity,
  })
  async requests(@Args(() => RequestsArgs) args: RequestsArgs, @Ctx() ctx: GraphQLContext): Promise<RequestLogConnection> {
    const accountId = requireAccount(ctx).accountId;
    const { keyId, model, status, outcome, from, to, first, after } = args;
    return toRequestLogConnection(await ctx.services.requestLog.list(accountId, definedArgs({ keyId, model, status, outcome, from, to, first, after })));
  }
}
