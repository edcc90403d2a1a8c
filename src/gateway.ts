import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import { openDatabase, type DatabaseHandle } from './infra/db/orm';
import { createLogger, type Logger } from './infra/observability/logger';
import { Metrics } from './infra/observability/metrics';
import { Catalog } from './domain/catalog/catalog';
import { AccountService } from './domain/accounts/account-service';
import { AccountAuthenticator } from './domain/accounts/account-authenticator';
import { KeyService } from './domain/keys/key-service';
import type { IdentityVerifier } from './domain/ports/identity';
import { DevIdentityProvider } from './infra/identity/dev-identity-provider';
import { OidcVerifier } from './infra/identity/oidc-verifier';
import { CallerUrlGuard } from './infra/http/caller-url-guard';
import { createHttpApp } from './rest/http-app';
import { opsRoutes } from './rest/routes/ops-routes';
import { accountRoutes } from './rest/routes/account-routes';
import { adminRoutes } from './rest/routes/admin-routes';
import { modelsRoutes } from './rest/routes/models-routes';
import { chatRoutes } from './rest/routes/chat-routes';
import { imageEditRoutes, imageGenerationRoutes } from './rest/routes/image-routes';
import { mediaRoutes } from './rest/routes/media-routes';
import { createRedis } from './infra/redis/redis-client';
import { FlexibleRateLimiter } from './infra/ratelimit/flexible-rate-limiter';
import { SafeHttpClient } from './infra/http/safe-http-client';
import { DiskBlobStore } from './infra/media/disk-blob-store';
import { MediaLibrary } from './domain/media/media-library';
import { Billing } from './domain/credits/billing';
import { ChatService } from './domain/chat/chat-service';
import { ImageService } from './domain/images/image-service';
import { ProviderRegistry } from './providers/provider-registry';
import { join } from 'node:path';

/**
 * The composition root: the one place that reads the config, picks each port's implementation
 * (PostgreSQL or PGlite, Redis or in-process, real OIDC or the development provider) and wires
 * the domain services into the two front doors by constructor injection.
 */
export interface Gateway {
  readonly config: Config;
  readonly logger: Logger;
  readonly server: Server;
  readonly database: DatabaseHandle;
  readonly catalog: Catalog;
  readonly accounts: AccountService;
  readonly keys: KeyService;
  /** Present when no OIDC_ISSUER is configured. */
  readonly devIdentity?: DevIdentityProvider;
  /** The origin media URLs are built on, known once the server listens. */
  publicBaseUrl(): string;
  listen(): Promise<string>;
  close(): Promise<void>;
}

export async function createGateway(config: Config, options: { logger?: Logger } = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const catalog = Catalog.load(config.modelsFile);
  const metrics = new Metrics();
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const { db } = database;

  let devIdentity: DevIdentityProvider | undefined;
  let identity: IdentityVerifier;
  if (config.oidc) identity = new OidcVerifier(config.oidc);
  else identity = devIdentity = await DevIdentityProvider.open(db);

  const redis = config.redisUrl ? createRedis(config.redisUrl, 'svc-gateway') : undefined;
  const limiter = new FlexibleRateLimiter(redis);
  // One outbound client for everything fetched from a URL: SSRF-checked after DNS, no redirects.
  const outbound = new SafeHttpClient({ allowLocal: false, defaultTimeoutMs: 30_000, maxResponseBytes: 200 * 1024 * 1024 });
  const providers = new ProviderRegistry({
    simulatorVideoSeconds: config.simulatorVideoSeconds,
    secrets: config.secrets,
    fetchMedia: (url) => outbound.fetchMedia(url),
  });
  let boundOrigin: string | undefined;
  const publicBaseUrl = () => config.publicBaseUrl ?? boundOrigin ?? `http://${config.host}:${config.port}`;
  const media = await MediaLibrary.open(db, new DiskBlobStore(join(config.dataDir, 'media')), publicBaseUrl);
  const billing = new Billing(db);
  const chat = new ChatService(catalog, providers, billing, limiter);
  const images = new ImageService(catalog, providers, billing, limiter, media);

  const urls = new CallerUrlGuard({ webhookAllowLocal: config.webhook.allowLocal });
  const accounts = new AccountService(db);
  const keys = new KeyService(db, (id) => catalog.has(id), urls);
  const accountAuth = new AccountAuthenticator(identity, accounts);

  let draining = false;
  const app = createHttpApp({
    logger,
    metrics,
    keys,
    accounts: accountAuth,
    adminToken: config.adminToken,
    doors: {
      open: [opsRoutes({ metrics, isDraining: () => draining }), mediaRoutes(media)],
      v1Raw: [imageEditRoutes(images)],
      v1: [modelsRoutes(catalog), chatRoutes(chat), imageGenerationRoutes(images)],
      account: [accountRoutes({ accounts, keys })],
      admin: [adminRoutes({ accounts })],
    },
  });
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = 15 * 60_000;

  const gateway: Gateway = {
    config,
    logger,
    server,
    database,
    catalog,
    accounts,
    keys,
    devIdentity,
    publicBaseUrl,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          const { port } = server.address() as AddressInfo;
          boundOrigin = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
          resolve(boundOrigin);
        });
      }),
    close: async () => {
      draining = true;
      // Stop accepting, let in-flight requests finish, then release the database.
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 10_000).unref();
      });
      await providers.close();
      await outbound.close();
      redis?.disconnect();
      await database.close();
    },
  };
  return gateway;
}
