import { createServer, type IncomingMessage, type Server } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import type { Express, Request } from 'express';
import type { Config } from './config';
import { openDatabase, type DatabaseHandle } from './infra/db/orm';
import { tagRequestIds } from './infra/http/request-id';
import { createLogger, type Logger } from './infra/observability/logger';
import { Metrics } from './infra/observability/metrics';
import { createRedis, whenReady } from './infra/redis/redis-client';
import { throttledWarn } from './infra/observability/throttled-warn';
import { buildServices, type Services } from './services';
import { createHttpApp, routeLabel } from './rest/http-app';
import { startTracing } from './infra/observability/tracing';
import { CHAT_BODY_LIMIT } from './rest/json-body';
import { sharedProbe } from './infra/health/shared-probe';
import { opsRoutes } from './rest/routes/ops-routes';
import { LoopStallWatch } from './infra/runtime/loop-stall-watch';
import { accountRoutes } from './rest/routes/account-routes';
import { adminRoutes } from './rest/routes/admin-routes';
import { modelsRoutes } from './rest/routes/models-routes';
import { keyRoutes } from './rest/routes/key-routes';
import { chatCompletionsHandler, chatRoutes } from './rest/routes/chat-routes';
import { createResponseHandler, responsesRoutes } from './rest/routes/responses-routes';
import { withJsonLane } from './rest/json-lane';
import { imageEditRoutes, imageGenerationRoutes } from './rest/routes/image-routes';
import { mediaRoutes } from './rest/routes/media-routes';
import { videoRoutes } from './rest/routes/video-routes';
import { videosRoutes } from './rest/routes/videos-routes';
import { accountDeliveryRoutes } from './rest/routes/webhook-log-routes';
import { historyRoutes } from './rest/routes/history-routes';
import { requestLogRoutes } from './rest/routes/request-log-routes';
import { purchaseRoutes, stripeWebhookRoutes } from './rest/routes/purchase-routes';
import { consoleRoutes } from './rest/routes/console-routes';
import { devSignInRoutes } from './rest/routes/dev-sign-in-routes';
import { openApiRoutes, requireOpenApiDocument } from './rest/routes/openapi-routes';
import { createGraphQLDoor } from './graphql/door';
import { idempotencyMiddleware } from './rest/idempotency-middleware';
import { HttpDrain } from './infra/http/http-drain';
import { answerRequestTimeouts } from './rest/request-timeout';
import { continueWhenRead } from './rest/expect-continue';
import type { CallSignal } from './domain/shared/call-signal';
import type { Clock } from './domain/ports/clock';
import { sleepOn, systemClock } from './domain/shared/system-clock';
import { monotonicMillis } from './domain/shared/time';

/** What a stream gets, after the drain deadline, to send its error event and settle. */
export const STREAM_WRAP_UP_MS = 2_000;

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
  /** The REST door as built: the Express app and the paths the JSON lane serves ahead of it (the OpenAPI test compares them with the document). */
  readonly rest: { readonly app: Express; readonly jsonLanePaths: readonly string[] };
  publicBaseUrl(): string;
  listen(): Promise<string>;
  /**
   * Shutdown signals for long-running work: `draining` aborts when close() begins (SIGTERM),
   * `deadline` at SHUTDOWN_DRAIN_SECONDS, when a stream still running must send its error
   * event, settle what it sent and end (it then has STREAM_WRAP_UP_MS before connections are cut).
   */
  readonly shutdown: { draining: AbortSignal; deadline: CallSignal };
  /** Drains (see README "Shutdown") and releases everything; resolves when nothing is left open. */
  close(): Promise<void>;
}

/** `clock`: what the services keep time with (the system's; a test's fake clock, to step time). */
export async function createGateway(config: Config, options: { logger?: Logger; clock?: Clock } = {}): Promise<Gateway> {
  // Read before anything is opened: a tree without docs/openapi.yaml stops here, naming the path.
  requireOpenApiDocument();
  // First, so that every log line and span of the start-up's requests has it; undefined when off.
  const tracer = await startTracing(config.tracing);
  const logger = options.logger ?? createLogger(config.logLevel, tracer?.logFields);
  const metrics = new Metrics();
  const warn = throttledWarn(logger);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    migrate: config.migrateOnStart,
    onHealthChange: (up, err) => {
      metrics.dependencyUp.set({ dependency: 'postgresql' }, up ? 1 : 0);
      if (up) logger.info('the database answers again');
      else logger.warn({ err: String(err) }, 'the database does not answer: requests that need it answer 503, workers back off');
    },
    onDriverWarning: (message) => warn('knex', { driver: message }, 'database driver warning'),
  });
  metrics.dependencyUp.set({ dependency: 'postgresql' }, 1);
  const redis = config.redisUrl
    ? createRedis(config.redisUrl, 'svc-gateway', (err) => warn('redis:connection', { err: String(err) }, 'Redis connection error'))
    : undefined;
  if (redis) {
    redis.on('ready', () => metrics.dependencyUp.set({ dependency: 'redis' }, 1));
    redis.on('close', () => metrics.dependencyUp.set({ dependency: 'redis' }, 0));
    // Starting with Redis down works: rate limits are per instance and events local until it comes.
    if (!(await whenReady(redis, 2_000))) logger.warn('Redis is not reachable at start-up; running degraded until it is');
  }
  let boundOrigin: string | undefined;
  const publicBaseUrl = () => config.publicBaseUrl ?? boundOrigin ?? `http://${config.host}:${config.port}`;
  let services: Services | undefined;
  let graphql: Awaited<ReturnType<typeof createGraphQLDoor>>;
  try {
    services = await buildServices({ config, db: database.db, hotDb: database.hot, redis, logger, metrics, publicBaseUrl, clock: options.clock, tracer });
    graphql = await createGraphQLDoor({
      services,
      logger,
      production: config.env === 'production',
      maxConnectionsPerAddress: config.wsMaxConnectionsPerAddress,
      trustedProxies: config.trustedProxies,
      metrics,
      clock: options.clock,
    });
  } catch (err) {
    // A start-up refusal (a configuration error, say) closes what was opened: a caller that
    // goes on (a test, a supervisor in-process) is not left with a pool and its timers.
    await services?.close().catch(() => undefined);
    redis?.disconnect();
    await database.close().catch(() => undefined);
    await tracer?.shutdown().catch(() => undefined);
    throw err;
  }
  const s = services;

  let draining = false;
  const loopStall = new LoopStallWatch(options.clock ?? systemClock, config.livenessStallSeconds * 1000);
  const streamTerms = { shutdownDeadline: () => drain.deadline, stallMs: config.streamStallSeconds * 1000 };
  // One database probe per quarter second, however often /healthz is asked; polled often, it
  // answers from the last probe (at most 2 s old) while the next runs.
  const databaseProbe = sharedProbe(() => database.probe(3_000), 250, Date.now, 2_000);
  // A connected Redis that does not answer (a partition) is down too: asked, not read off the socket.
  const redisProbe = sharedProbe(
    () =>
      redis
        ? redis.ping().then(
            () => 'up' as const,
            () => 'down' as const,
          )
        : Promise.resolve('down' as const),
    250,
    Date.now,
    2_000,
  );
  // Idempotency-Key around the billable JSON POSTs, placed by each route after its parser.
  const idempotentJson = idempotencyMiddleware(s.idempotency, logger, 'json');
  // … and around the multipart ones, before their upload is parsed.
  const idempotencyRaw = idempotencyMiddleware(s.idempotency, logger, 'raw');
  const app = createHttpApp({
    logger,
    metrics,
    keys: s.keys,
    accounts: s.accountAuth,
    operators: s.operators,
    requestLog: s.requestLog,
    doors: {
      open: [
        opsRoutes({
          metrics,
          isDraining: () => draining,
          loopStall: () => loopStall.stalled(),
          dependencies: async () => ({
            database: await databaseProbe(),
            redis: redis ? (redis.status === 'ready' ? await redisProbe() : 'down') : 'none',
          }),
        }),
        mediaRoutes(s.media),
        stripeWebhookRoutes(s.purchases, logger),
        openApiRoutes(),
        consoleRoutes({ signIn: config.oidc ? { kind: 'oidc', ...config.oidc } : { kind: 'dev' }, publicBaseUrl }),
        // The development provider's sign-in page; config refuses that provider under NODE_ENV=production.
        ...(s.devIdentity && config.env !== 'production' ? [devSignInRoutes(s.devIdentity)] : []),
      ],
      v1Raw: [imageEditRoutes(s.images, streamTerms, idempotencyRaw)],
      // The busiest first: Express tries routers in order.
      v1: [
        chatRoutes(s.chat, streamTerms, idempotentJson),
        responsesRoutes(s.responses, streamTerms, idempotentJson),
        imageGenerationRoutes(s.images, streamTerms, idempotentJson),
        modelsRoutes(s.catalog),
        videoRoutes(s.video, s.videoControls, idempotentJson),
        videosRoutes({ video: s.video, videos: s.videos, controls: s.videoControls }, { json: idempotentJson, raw: idempotencyRaw }),
        keyRoutes(s.spending),
      ],
      account: [
        accountRoutes({ accounts: s.accounts, accountWebhook: s.accountWebhook, keys: s.keys, spending: s.spending }),
        accountDeliveryRoutes(s.history),
        historyRoutes(s.history),
        requestLogRoutes(s.requestLog, logger),
        purchaseRoutes(s.purchases),
      ],
      admin: [adminRoutes({ actions: s.operatorActions, reads: s.operatorReads, audit: s.audit })],
    },
    graphql: graphql.mount.bind(graphql),
  });
  // The billed JSON POSTs skip Express when nothing about them needs it (rest/json-lane.ts).
  const lane = [
    { path: '/v1/chat/completions', limitBytes: CHAT_BODY_LIMIT, handle: chatCompletionsHandler(s.chat, streamTerms) },
    { path: '/v1/responses', limitBytes: CHAT_BODY_LIMIT, handle: createResponseHandler(s.responses, streamTerms) },
  ];
  const receiveMs = config.requestReceiveSeconds * 1000;
  // node checks the receive deadline on this interval (30 s by default): a quarter of it, at most 30 s.
  const listener = withJsonLane({ keys: s.keys, metrics, logger, requestLog: s.requestLog }, lane, app);
  // A request Express never saw (originalUrl unset) was one of the lane's, named by its whole path.
  const routeOf = (req: IncomingMessage, status: number) => ((req as Request).originalUrl === undefined ? (req.url ?? '') : routeLabel(req as Request, status));
  const server = createServer(
    { connectionsCheckingInterval: Math.min(30_000, Math.max(250, receiveMs / 4)) },
    tracer ? tracer.serve(listener, routeOf) : listener,
  );
  graphql.attach(server);
  const drain = new HttpDrain(server);
  tagRequestIds(server);
  let closing: Promise<void> | undefined;
  server.keepAliveTimeout = 65_000;
  server.requestTimeout = receiveMs;
  server.headersTimeout = Math.min(server.headersTimeout, receiveMs);
  answerRequestTimeouts(server, config.requestReceiveSeconds);
  continueWhenRead(server);

  return {
    config,
    logger,
    server,
    database,
    services,
    accounts: s.accounts,
    keys: s.keys,
    devIdentity: s.devIdentity,
    rest: { app, jsonLanePaths: lane.map((r) => r.path) },
    publicBaseUrl,
    listen: () =>
      new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(config.port, config.host, () => {
          const { port } = server.address() as AddressInfo;
          boundOrigin = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
          if (config.workerConcurrency > 0) s.worker.start();
          loopStall.start();
          resolve(boundOrigin);
        });
      }),
    shutdown: { draining: drain.drainingSignal, deadline: drain.deadline },
    close: () =>
      (closing ??= (async () => {
        // Balancers see /healthz 503 and every response says Connection: close from now on.
        draining = true;
        drain.begin();
        // Notice first: keep serving (with /healthz 503 and Connection: close) until a balancer's
        // health check has taken this instance out, so no request races the closing listener.
        if (config.shutdownNoticeSeconds > 0) {
          logger.info({ noticeSeconds: config.shutdownNoticeSeconds }, 'shutdown notice: /healthz answers 503');
          await sleepOn(options.clock ?? systemClock, config.shutdownNoticeSeconds * 1000);
        }
        const deadlineAt = monotonicMillis() + config.shutdownDrainSeconds * 1000;
        logger.info({ inFlight: drain.inFlight, drainSeconds: config.shutdownDrainSeconds }, 'draining');
        // The worker finishes what it runs (or gives the leases back at the deadline) meanwhile.
        const workerStopped = s.worker.stop(Math.max(0, deadlineAt - monotonicMillis()));
        // WebSockets first: an upgraded socket would keep server.close() waiting.
        await graphql.close();
        // Stop accepting connections (a balancer retries a refused connection elsewhere); open
        // keep-alive connections stay, each closed after its next response, which for /healthz is a 503.
        const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
        if (!(await drain.whenIdle(deadlineAt - monotonicMillis()))) {
          // Streams listening to the deadline end themselves (error event, billing settled).
          logger.warn({ inFlight: drain.inFlight }, 'drain deadline reached; ending what still runs');
          drain.expire();
          await drain.whenIdle(STREAM_WRAP_UP_MS);
        }
        server.closeAllConnections();
        await closed;
        loopStall.stop();
        await workerStopped;
        await s.close();
        redis?.disconnect();
        await database.close();
        // Last: the spans of the drained requests go out before the process ends.
        await tracer?.shutdown();
      })()),
  };
}
