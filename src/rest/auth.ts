import { authorizationHeader, bearerToken } from '../infra/http/bearer-token';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { unauthenticated } from '../domain/errors/domain-error';
import type { OperatorAccess, OperatorActor } from '../domain/operators/operator-access';
import type { KeyPrincipal } from '../domain/keys/principal';
import type { KeyAuthenticator } from '../domain/keys/key-authenticator';
import { keyIdOfSecret } from '../domain/keys/key-secrets';
import type { AccountAuthenticator } from '../domain/accounts/account-authenticator';

export function keyOf(res: Response): KeyPrincipal {
  return res.locals.key as KeyPrincipal;
}

export function accountIdOf(res: Response): string {
  return res.locals.accountId as string;
}

/** The API key of a /v1 request's Authorization header, or the 401: one rule for Express's routes and the JSON lane. */
export function authenticateApiKey(keys: KeyAuthenticator, req: IncomingMessage): Promise<KeyPrincipal> {
  const token = bearerToken(authorizationHeader(req));
  if (!token) return Promise.reject(unauthenticated('Missing or malformed Authorization header; expected "Bearer <API key>".'));
  return keys.authenticate(token);
}

/** /v1: an API key. The same KeyAuthenticator serves the GraphQL door. */
export function requireApiKey(keys: KeyAuthenticator): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    // Mounted before the multipart routers and again before the JSON ones: authenticate once.
    if (res.locals.key) return next();
    authenticateApiKey(keys, req).then((key) => {
      res.locals.key = key;
      next();
    }, next);
  };
}

/** /account: an identity-provider ID token of the account owner. */
export function requireIdToken(accounts: AccountAuthenticator): RequestHandler {
  return (req, res, next) => {
    const token = bearerToken(authorizationHeader(req));
    if (!token) return next(unauthenticated('Missing or malformed Authorization header; expected "Bearer <ID token>".'));
    // Shaped like an API key: say so, rather than "Invalid ID token." to a developer who sent the right thing to the wrong door.
    if (keyIdOfSecret(token)) return next(unauthenticated("This endpoint takes the account owner's ID token (from signing in), not an API key."));
    accounts.authenticate(token).then((account) => {
      res.locals.accountId = account.id;
      next();
    }, next);
  };
}

/** /admin: an operator (OperatorAccess decides: ADMIN_TOKEN, or a listed subject's ID token); without either setting the routes do not exist. */
export function requireOperator(operators: OperatorAccess): RequestHandler {
  return (req, res, next) => {
    operators.authenticate(bearerToken(authorizationHeader(req)), `${req.method} ${req.path}`).then((actor) => {
      res.locals.operator = actor;
      next();
    }, next);
  };
}

/** Who is acting on an /admin route: the audit log's actor. */
export function operatorOf(res: Response): OperatorActor {
  return res.locals.operator as OperatorActor;
}
