import express, { type Express, type Router } from 'express';
import type { Logger } from '../infra/observability/logger';
import type { Metrics } from '../infra/observability/metrics';
import type { KeyAuthenticator } from '../domain/keys/key-authenticator';
import type { AccountAuthenticator } from '../domain/accounts/account-authenticator';
import { errorMiddleware, notFoundHandler } from './error-middleware';
import { requireAdmin, requireApiKey, requireIdToken } from './auth';

/** JSON bodies above this answer 413; image edits (multipart) have their own limit. */
export const JSON_BODY_LIMIT = '1mb';

export interface RestDoors {
  /** Routers mounted under /v1, behind API-key authentication. */
  v1: Router[];
  /** Routers for /account, behind ID-token authentication. */
  account: Router[];
  /** Routers for /admin, behind ADMIN_TOKEN. */
  admin: Router[];
  /** Unauthenticated routers (health, metrics, media with their own tokens). */
  open: Router[];
  /** Routers mounted before the JSON parser (multipart endpoints), behind API-key authentication. */
  v1Raw?: Router[];
}

function routeGroup(path: string): string {
  const parts = path.split('/');
  return parts.slice(0, parts[1] === 'v1' || parts[1] === 'account' || parts[1] === 'admin' ? 3 : 2).join('/') || '/';
}

export function createHttpApp(deps: {
  logger: Logger;
  metrics: Metrics;
  keys: KeyAuthenticator;
  accounts: AccountAuthenticator;
  adminToken?: string;
  doors: RestDoors;
  graphql?: (app: Express) => void;
}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', false);

  app.use((req, res, next) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const group = res.statusCode === 404 && !res.locals.routed ? 'unmatched' : routeGroup(req.path);
      deps.metrics.httpRequests.inc({ route: group, status: String(res.statusCode) });
      deps.metrics.httpDuration.observe({ route: group }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  });

  for (const r of deps.doors.open) app.use(r);
  deps.graphql?.(app);

  const v1Auth = requireApiKey(deps.keys);
  for (const r of deps.doors.v1Raw ?? []) app.use('/v1', v1Auth, r);
  const json = express.json({ limit: JSON_BODY_LIMIT, strict: true });
  app.use('/v1', json, v1Auth, ...deps.doors.v1);
  app.use('/account', json, requireIdToken(deps.accounts));
  for (const r of deps.doors.account) app.use(r);
  app.use('/admin', requireAdmin(deps.adminToken), json);
  for (const r of deps.doors.admin) app.use(r);

  app.use(notFoundHandler);
  app.use(errorMiddleware(deps.logger));
  return app;
}
