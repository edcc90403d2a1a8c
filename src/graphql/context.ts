import { DomainError, unauthenticated } from '../domain/errors/domain-error';
import type { AccountPrincipal, KeyPrincipal, Principal } from '../domain/keys/principal';
import type { Services } from '../services';

/** What the resolvers may use: the domain services REST uses, nothing of the transport. */
export type GraphQLServices = Pick<
  Services,
  | 'catalog'
  | 'accounts'
  | 'accountWebhook'
  | 'accountAuth'
  | 'purchases'
  | 'keys'
  | 'spending'
  | 'history'
  | 'requestLog'
  | 'video'
  | 'videoControls'
  | 'idempotency'
  | 'events'
  | 'accountEvents'
  | 'keyChanges'
>;

export interface GraphQLContext {
  /** null: no credential was given (introspection still works outside production). */
  principal: Principal | null;
  services: GraphQLServices;
}

/** A key has a recognisable shape; anything else is taken for an identity-provider ID token. */
const KEY_SHAPE = /^svc_(live|test)_/;

export async function authenticateBearer(token: string, services: GraphQLServices): Promise<Principal> {
  if (KEY_SHAPE.test(token)) return services.keys.authenticate(token);
  const account = await services.accountAuth.authenticate(token);
  return { kind: 'account', accountId: account.id, usableUntil: account.usableUntil };
}

export const missingCredential = () => unauthenticated('This operation needs credentials: Authorization: Bearer <API key or ID token>.');

/** Key powers (models, quotes, queueing): an ID token is the wrong credential, not a missing one. */
export function requireKey(ctx: GraphQLContext): KeyPrincipal {
  if (!ctx.principal) throw missingCredential();
  if (ctx.principal.kind !== 'key') throw new DomainError('permission_error', 'This operation needs an API key, not an ID token.');
  return ctx.principal;
}

/** Account powers (keys, webhooks, balance): only the owner's ID token. */
export function requireAccount(ctx: GraphQLContext): AccountPrincipal {
  if (!ctx.principal) throw missingCredential();
  if (ctx.principal.kind !== 'account') throw new DomainError('permission_error', 'This operation needs an ID token of the account owner, not an API key.');
  return ctx.principal;
}

/** Reading the account's jobs: either credential, scoped to its account. */
export function requireAccountId(ctx: GraphQLContext): string {
  return requirePrincipal(ctx).accountId;
}

/** Either credential, as it is: what a job's owner may do with a key (within its models) or the ID token. */
export function requirePrincipal(ctx: GraphQLContext): Principal {
  if (!ctx.principal) throw missingCredential();
  return ctx.principal;
}
