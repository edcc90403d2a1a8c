import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import { openDatabase, type DatabaseHandle } from './infra/db/orm';
import { createLogger, type Logger } from './infra/observability/logger';
import { Metrics } from './infra/observability/metrics';
import { createRedis } from './infra/redis/redis-client';
import { buildServices, type Services } from './services';
import { createHttpApp } from './rest/http-app';
import { opsRoutes } from './rest/routes/ops-routes';
import { accountRoutes } from './rest/routes/account-routes';
import { adminRoutes } from './rest/routes/admin-routes';
import { modelsRoutes } from './rest/routes/models-routes';
import { chatRoutes } from './rest/routes/chat-routes';
import { responsesRoutes } from './rest/routes/responses-routes';
import { imageEditRoutes, imageGenerationRoutes } from './rest/routes/image-routes';
import { mediaRoutes } from './rest/routes/media-routes';
import { videoRoutes } from './rest/routes/video-routes';
import { accountDeliveryRoutes, adminDeliveryRoutes } from './rest/routes/webhook-log-routes';
import { historyRoutes } from './rest/routes/history-routes';
import { consoleRoutes } from './rest/routes/console-routes';
import { devSignInRoutes } from './rest/routes/dev-sign-in-routes';
import { createGraphQLDoor } from './graphql/door';
import { idempotencyMiddleware } from './rest/idempotency-middleware';

/**
 * The composition root: opens the database (PostgreSQL or PGlite) and Redis (or none), builds
 * the services, and puts the two front doors on one HTTP server. Nothing else reads the config.
 */
export interface Gateway {
  readonly config: Config;
  readonly logger: Logger;
  readonly server: Server;
  readonly database: DatabaseHandle;
  readonly services: Services;
  /** Shortcuts used by start-up and tests. */
  readonly accounts: Services['accounts'];
  readonly keys: Services['keys'];
  readonly devIdentity: Services['devIdentity'];
  publicBaseUrl(): string;
  listen(): Promise<string>;
  close(): Promise<void>;
}

export async function createGateway(config: Config, options: { logger?: Logger } = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const metrics = new Metrics();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const redis = config.redisUrl ? createRedis(config.redisUrl, 'svc-gateway') : undefined;
  let boundOrigin: string | undefined;
  const publicBaseUrl = () => config.publicBaseUrl ?? boundOrigin ?? `http://${config.host}:${config.port}`;
  const services = await buildServices({ config, db: database.db, redis, logger, metrics, publicBaseUrl });
  const s = services;

  let draining = false;
  const graphql = await createGraphQLDoor({ services: s, logger, production: config.env === 'production' });
  const app = createHttpApp({
    logger,
    metrics,
    keys: s.keys,
    accounts: s.accountAuth,
    adminToken: config.adminToken,
    doors: {
      open: [
        opsRoutes({ metrics, isDraining: () => draining }),
        mediaRoutes(s.media),
        consoleRoutes({ signIn: config.oidc ? { kind: 'oidc', ...config.oidc } : { kind: 'dev' }, publicBaseUrl }),
        // The development provider's sign-in page; config refuses that provider under NODE_ENV=production.
        ...(s.devIdentity && config.env !== 'production' ? [devSignInRoutes(s.devIdentity)] : []),
      ],
      v1Raw: [imageEditRoutes(s.images)],
      v1: [modelsRoutes(s.catalog), chatRoutes(s.chat), responsesRoutes(s.responses), imageGenerationRoutes(s.images), videoRoutes(s.video)],
      account: [accountRoutes({ accounts: s.accounts, keys: s.keys }), accountDeliveryRoutes(s.history), historyRoutes(s.history)],
      admin: [adminRoutes({ accounts: s.accounts }), adminDeliveryRoutes(database.db)],
    },
    graphql: graphql.mount,
    idempotency: { raw: idempotencyMiddleware(s.idempotency, logger, 'raw'), json: idempotencyMiddleware(s.idempotency, logger, 'json') },
  });
  const server = createServer(app);
  graphql.attach(server);
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 15 * 60_000;

  return {
    config,
    logger,
    server,
    database,
    services,
    accounts: s.accounts,
    keys: s.keys,
    devIdentity: s.devIdentity,
    publicBaseUrl,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          const { port } = server.address() as AddressInfo;
          boundOrigin = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
          if (config.workerConcurrency > 0) s.worker.start();
          resolve(boundOrigin);
        });
      }),
    close: async () => {
      draining = true;
      // WebSockets first: an upgraded socket would keep server.close() waiting.
      await graphql.close();
      // Stop accepting, let in-flight requests finish, stop the worker, then release connections.
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 10_000).unref();
      });
      await s.close();
      redis?.disconnect();
      await database.close();
    },
  };
}
