import { authorizationHeader, bearerToken } from '../infra/http/bearer-token';
import { timingSafeEqual, createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { notFound, unauthenticated } from '../domain/errors/domain-error';
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

/** /admin: the operator token, compared in constant time; without ADMIN_TOKEN the routes do not exist. */
export function requireAdmin(adminToken: string | undefined): RequestHandler {
  const expected = adminToken ? createHash('sha256').update(adminToken).digest() : null;
  return (req, _res, next) => {
    if (!expected) return next(notFound(`Unknown route ${req.method} ${req.path}.`, 'route_not_found'));
    const token = bearerToken(authorizationHeader(req));
    const given = createHash('sha256')
      .update(token ?? '')
      .digest();
    if (!token || !timingSafeEqual(given, expected)) return next(unauthenticated('Invalid admin token.'));
    next();
  };
}
