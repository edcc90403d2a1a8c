import { DomainError, permissionDenied, unauthenticated } from '../domain/errors/domain-error';
import type { AccountPrincipal, KeyPrincipal, Principal } from '../domain/keys/principal';
import type { OperatorActor, OperatorPrincipal } from '../domain/operators/operator-access';
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
  | 'operators'
  | 'operatorActions'
  | 'operatorReads'
  | 'audit'
>;

/** Who a GraphQL operation runs for: an API key, an account owner (an operator too when listed), or the ADMIN_TOKEN holder. */
export type CallerPrincipal = Principal | OperatorPrincipal;

export interface GraphQLContext {
  /** null: no credential was given (introspection still works outside production). */
  principal: CallerPrincipal | null;
  services: GraphQLServices;
}

/** A key has a recognisable shape; anything else is taken for an identity-provider ID token. */
const KEY_SHAPE = /^svc_(live|test)_/;

export async function authenticateBearer(token: string, services: GraphQLServices): Promise<CallerPrincipal> {
  if (services.operators.isAdminToken(token)) return { kind: 'operator', actor: 'token' };
  if (KEY_SHAPE.test(token)) return services.keys.authenticate(token);
  const account = await services.accountAuth.authenticate(token);
  const operator = services.operators.actorOfSubject(account.subject);
  return { kind: 'account', accountId: account.id, usableUntil: account.usableUntil, ...(operator ? { operator } : {}) };
}

export const missingCredential = () => unauthenticated('This operation needs credentials: Authorization: Bearer <API key or ID token>.');

/** Key powers (models, quotes, queueing): an ID token is the wrong credential, not a missing one. */
export function requireKey(ctx: GraphQLContext): KeyPrincipal {
  if (!ctx.principal) throw missingCredential();
  if (ctx.principal.kind === 'operator') throw adminTokenOnly();
  if (ctx.principal.kind !== 'key') throw new DomainError('permission_error', 'This operation needs an API key, not an ID token.');
  return ctx.principal;
}

/** Account powers (keys, webhooks, balance): only the owner's ID token. */
export function requireAccount(ctx: GraphQLContext): AccountPrincipal {
  if (!ctx.principal) throw missingCredential();
  if (ctx.principal.kind === 'operator') throw adminTokenOnly();
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
  if (ctx.principal.kind === 'operator') throw adminTokenOnly();
  return ctx.principal;
}

const adminTokenOnly = () => new DomainError('permission_error', 'ADMIN_TOKEN opens only the operator operations; this one needs an API key or an ID token.');

/**
 * The one operator check of every operator operation (resolvers/admin-*.ts): the ADMIN_TOKEN
 * holder, or an ID token whose subject is in ADMIN_SUBJECTS. Any other credential is known but
 * not an operator's: permission_denied. Answers the actor the audit log names.
 */
export function requireOperator(ctx: GraphQLContext): OperatorActor {
  if (!ctx.principal) throw missingCredential();
  if (ctx.principal.kind === 'operator') return ctx.principal.actor;
  if (ctx.principal.kind === 'account' && ctx.principal.operator) return ctx.principal.operator;
  throw permissionDenied();
}
