import express, { type Express, type Request, type RequestHandler, type Router } from 'express';
import type { Logger } from '../infra/observability/logger';
import type { Metrics } from '../infra/observability/metrics';
import type { KeyAuthenticator } from '../domain/keys/key-authenticator';
import type { AccountAuthenticator } from '../domain/accounts/account-authenticator';
import { errorMiddleware, notFoundHandler } from './error-middleware';
import { storableText } from './storable-text';
import { observeRequest } from './request-metrics';
import { requireApiKey, requireIdToken, requireOperator } from './auth';
import type { OperatorAccess } from '../domain/operators/operator-access';
import type { RequestLog } from '../domain/requests/request-log';
import { openCallLogs } from './call-logs';

export interface RestDoors {
  /** Routers mounted under /v1, behind API-key authentication. */
  v1: Router[];
  /** Routers for /account, behind ID-token authentication. */
  account: Router[];
  /** Routers for /admin, behind an operator's credential (ADMIN_TOKEN or a listed subject's ID token). */
  admin: Router[];
  /** Unauthenticated routers (health, metrics, media with their own tokens). */
  open: Router[];
  /**
   * Multipart routers, behind API-key authentication; each places the raw Idempotency-Key
   * handler itself, after its rate limit (see image-routes).
   */
  v1Raw?: Router[];
}

/** Mounts answered outside an Express route (Apollo, static files), labelled by their mount. */
const MOUNT_LABELS = ['/graphql', '/console'];

/**
 * The metrics label of a finished request: its route template (`/v1/video/:id`), never the path
 * a client typed, so a flood of random paths adds no series. Requests that reached no route are
 * `unmatched` (404) or `unrouted` (refused before routing: 401, …).
 */
export function routeLabel(req: Request, status: number): string {
  if (req.route) {
    // /v1 routers are mounted under /v1 (and an error answered after them no longer has that
    // baseUrl); every other router spells its whole path.
    const path = String((req.route as { path: unknown }).path);
    return req.originalUrl.startsWith('/v1/') && !path.startsWith('/v1') ? `/v1${path}` : path;
  }
  const mount = MOUNT_LABELS.find((m) => req.originalUrl === m || req.originalUrl.startsWith(`${m}/`) || req.originalUrl.startsWith(`${m}?`));
  if (mount) return mount;
  return status === 404 ? 'unmatched' : 'unrouted';
}

/**
 * Answers for a credential are nobody else's: a key's secret shown once, a webhook secret, the
 * account, stored responses. No cache (a proxy's, the browser's disk) may keep them. The JSON
 * lane sets the same; media (token-authenticated, immutable) keeps its own caching.
 */
export const noStore: RequestHandler = (_req, res, next) => {
  res.setHeader('Cache-Control', NO_STORE);
  next();
};
export const NO_STORE = 'no-store';

export function createHttpApp(deps: {
  logger: Logger;
  metrics: Metrics;
  keys: KeyAuthenticator;
  accounts: AccountAuthenticator;
  operators: OperatorAccess;
  /** Where /v1 calls are logged (each request's row opened once its key is authenticated). */
  requestLog: RequestLog;
  doors: RestDoors;
  graphql?: (app: Express) => void;
}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);

  app.use((req, res, next) => {
    observeRequest(deps.metrics, res, (status) => routeLabel(req, status));
    next();
  });

  app.use(storableText);

  // /v1 first, in one router: the API's hot path skips every other door's routes. Each door
  // authenticates before any body is read (a stranger cannot make us parse 25 MB); the routes
  // that take a body parse it themselves (rest/json-body.ts), so a path without a route is a 404
  // whatever its Content-Type.
  const v1 = express.Router();
  v1.use(noStore, requireApiKey(deps.keys), openCallLogs(deps.requestLog));
  for (const r of deps.doors.v1Raw ?? []) v1.use(r);
  v1.use(...deps.doors.v1);
  app.use('/v1', v1);

  for (const r of deps.doors.open) app.use(r);
  deps.graphql?.(app);
  app.use('/account', noStore, requireIdToken(deps.accounts));
  for (const r of deps.doors.account) app.use(r);
  app.use('/admin', noStore, requireOperator(deps.operators));
  for (const r of deps.doors.admin) app.use(r);

  app.use(notFoundHandler);
  app.use(errorMiddleware(deps.logger));
  return app;
}
