import { Arg, Args, ArgsType, Ctx, Field, Float, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { requireAccount, type GraphQLContext } from '../context';
import { AccountType, ApiKeyType, CreatedApiKey, WebhookConfig, toAccountType, toApiKeyType } from '../types/account';
import { CreateApiKeyInput, UpdateApiKeyInput, createKeyBody, permissionsBody, updateKeyBody } from '../types/inputs';
import { namingArgument } from '../argument-names';
import type { ApiKey } from '../../domain/keys/key-record';

/** An ArgsType (not three @Arg) so the SDL lists the arguments in CONTRACT's order. */
@ArgsType()
class PermissionsArgs {
  @Field(() => ID) id!: string;
  @Field(() => [String], { nullable: true }) allowedModels?: string[] | null;
  @Field(() => [String], { nullable: true }) blockedModels?: string[] | null;
}

@ArgsType()
class RotateArgs {
  @Field(() => ID) id!: string;
  @Field(() => Int, { nullable: true, description: 'Seconds the replaced secret still works: 0 to 604800; omitted or null: 86400.' })
  graceSeconds?: number | null;
}

@ArgsType()
class WebhookArgs {
  @Field(() => ID) keyId!: string;
  @Field(() => String, { nullable: true, description: 'An https URL; null removes the webhook.' }) url?: string | null;
}

/** A key's record with what it spent. */
const record = async (ctx: GraphQLContext, key: ApiKey): Promise<ApiKeyType> => toApiKeyType(key, await ctx.services.spending.ofOne(key));

/** /account and /account/api-keys: the owner's ID token, the same AccountService and KeyService calls. */
@Resolver()
export class AccountResolver {
  @Query(() => AccountType)
  async account(@Ctx() ctx: GraphQLContext): Promise<AccountType> {
    return toAccountType(await ctx.services.accounts.get(requireAccount(ctx).accountId));
  }

  @Query(() => [ApiKeyType], { description: 'Active keys, never a secret.' })
  async apiKeys(@Ctx() ctx: GraphQLContext): Promise<ApiKeyType[]> {
    const keys = await ctx.services.keys.list(requireAccount(ctx).accountId);
    const spending = await ctx.services.spending.of(keys);
    return keys.map((k) => toApiKeyType(k, spending.get(k.id)!));
  }

  @Mutation(() => CreatedApiKey, { description: 'An 11th active key answers key_limit_reached.' })
  async createApiKey(@Arg('input', () => CreateApiKeyInput) input: CreateApiKeyInput, @Ctx() ctx: GraphQLContext): Promise<CreatedApiKey> {
    const { key, secret } = await ctx.services.keys.create(requireAccount(ctx).accountId, createKeyBody(input));
    return { ...(await record(ctx, key)), key: secret };
  }

  @Mutation(() => Boolean, { description: 'The key answers authentication_error from then on.' })
  async revokeApiKey(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.keys.revoke(requireAccount(ctx).accountId, id);
    return true;
  }

  @Mutation(() => ApiKeyType, { description: 'null or [] clears a list; an omitted argument leaves it as it is.' })
  async updateApiKeyPermissions(
    @Args(() => PermissionsArgs) { id, allowedModels, blockedModels }: PermissionsArgs,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ApiKeyType> {
    return record(ctx, await ctx.services.keys.update(requireAccount(ctx).accountId, id, permissionsBody(allowedModels, blockedModels)));
  }

  @Mutation(() => ApiKeyType, { description: 'Name, permissions, daily cap and budgets, as PATCH /account/api-keys/<id>.' })
  async updateApiKey(
    @Arg('id', () => ID) id: string,
    @Arg('input', () => UpdateApiKeyInput) input: UpdateApiKeyInput,
    @Ctx() ctx: GraphQLContext,
  ): Promise<ApiKeyType> {
    return record(ctx, await ctx.services.keys.update(requireAccount(ctx).accountId, id, updateKeyBody(input)));
  }

  @Mutation(() => CreatedApiKey, { description: 'A new secret (shown once), as POST /account/api-keys/<id>/rotate; the replaced one works for graceSeconds.' })
  async rotateApiKey(@Args(() => RotateArgs) { id, graceSeconds }: RotateArgs, @Ctx() ctx: GraphQLContext): Promise<CreatedApiKey> {
    const body = graceSeconds === undefined || graceSeconds === null ? {} : { graceSeconds };
    const { key, secret } = await ctx.services.keys.rotate(requireAccount(ctx).accountId, id, body);
    return { ...(await record(ctx, key)), key: secret };
  }

  @Mutation(() => WebhookConfig, { description: 'A URL registers it with a new secret (shown once); null removes URL and secret.' })
  async setWebhook(@Args(() => WebhookArgs) { keyId, url }: WebhookArgs, @Ctx() ctx: GraphQLContext): Promise<WebhookConfig> {
    const result = await namingArgument(ctx.services.keys.configureWebhook(requireAccount(ctx).accountId, keyId, { url: url ?? null }), 'id', 'keyId');
    return { url: result.url, secret: result.secret ?? null };
  }

  @Mutation(() => AccountType, { description: 'PATCH /account: credits below which balance.low is sent once per crossing; null clears.' })
  async setLowBalanceAlert(
    @Arg('lowBalanceAlert', () => Float, { nullable: true }) lowBalanceAlert: number | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): Promise<AccountType> {
    return toAccountType(await ctx.services.accounts.update(requireAccount(ctx).accountId, { lowBalanceAlert: lowBalanceAlert ?? null }));
  }

  @Mutation(() => WebhookConfig, { description: "The account's webhook, for its events: a URL registers it with a new secret (shown once); null removes it." })
  async setAccountWebhook(
    @Arg('url', () => String, { nullable: true, description: 'An https URL; null removes the webhook.' }) url: string | null | undefined,
    @Ctx() ctx: GraphQLContext,
  ): Promise<WebhookConfig> {
    const result = await ctx.services.accountWebhook.configure(requireAccount(ctx).accountId, { url: url ?? null });
    return { url: result.url, secret: result.secret ?? null };
  }

  @Mutation(() => WebhookConfig, { description: "A new secret for the account's webhook; in-flight retries keep the old one." })
  async regenerateAccountWebhookSecret(@Ctx() ctx: GraphQLContext): Promise<WebhookConfig> {
    const result = await ctx.services.accountWebhook.configure(requireAccount(ctx).accountId, { regenerateSecret: true });
    return { url: result.url, secret: result.secret ?? null };
  }

  @Mutation(() => WebhookConfig, { description: 'In-flight retries keep the old secret; new events use the new one.' })
  async regenerateWebhookSecret(@Arg('keyId', () => ID) keyId: string, @Ctx() ctx: GraphQLContext): Promise<WebhookConfig> {
    const result = await namingArgument(ctx.services.keys.configureWebhook(requireAccount(ctx).accountId, keyId, { regenerateSecret: true }), 'id', 'keyId');
    return { url: result.url, secret: result.secret ?? null };
  }
}
