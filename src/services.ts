import { join } from 'node:path';
import type Redis from 'ioredis';
import { ConfigError, type Config } from './config';
import { effectiveLeaseSeconds, leaseProblems, videoRouteCalls } from './domain/work/lease-policy';
import type { Clock } from './domain/ports/clock';
import type { Database, SqlExecutor } from './domain/ports/database';
import type { Logger } from './infra/observability/logger';
import type { Metrics } from './infra/observability/metrics';
import { Catalog } from './domain/catalog/catalog';
import { AccountService } from './domain/accounts/account-service';
import { AccountAuthenticator } from './domain/accounts/account-authenticator';
import { AccountWebhook } from './domain/accounts/account-webhook';
import { KeyService } from './domain/keys/key-service';
import { KeySpending } from './domain/keys/key-spend';
import { KeyExpiryNotices } from './domain/keys/key-expiry-notices';
import type { IdentityVerifier } from './domain/ports/identity';
import { MediaLibrary } from './domain/media/media-library';
import { Billing } from './domain/credits/billing';
import { STREAM_START_TIMES, StreamStarts } from './domain/credits/stream-starts';
import { ChargeBatcher } from './domain/credits/charge-batcher';
import { LeaseBook } from './domain/credits/lease-book';
import { Ledger } from './domain/credits/ledger';
import { FileChargeJournal } from './infra/credits/file-charge-journal';
import { newId } from './domain/shared/ids';
import { systemClock } from './domain/shared/system-clock';
import { MICRO_PER_CREDIT } from './domain/shared/money';
import { AccountHistory } from './domain/history/account-history';
import { holdExpiryHandler } from './domain/credits/hold-expiry';
import { ChatService } from './domain/chat/chat-service';
import { KeyCache } from './domain/keys/key-cache';
import { KeyDirectory } from './domain/keys/key-directory';
import { CircuitBreakers } from './domain/routing/circuit-breaker';
import { upstreamDigest } from './domain/routing/upstreams-view';
import { CatalogReloader } from './domain/catalog/catalog-reload';
import { upstreamAttemptReporter } from './infra/observability/upstream-attempts';
import type { TopicFeed } from './domain/ports/topic-feed';
import { LocalTopicFeed } from './infra/events/local-topic-feed';
import { RedisTopicFeed } from './infra/events/redis-topic-feed';
import { ResponsesService } from './domain/chat/responses/responses-service';
import { ImageService } from './domain/images/image-service';
import { VideoService } from './domain/video/video-service';
import { IdempotencyService } from './domain/idempotency/idempotency-service';
import { JobFinisher } from './domain/video/job-finisher';
import { VideoJobRunner } from './domain/video/video-job-runner';
import { VideoControls } from './domain/video/video-controls';
import { OpenAIVideos } from './domain/video/openai-videos';
import { TestKeyBudget } from './domain/ratelimit/test-key-budget';
import { Worker } from './domain/work/worker';
import { WebhookDeliverer } from './domain/webhooks/webhook-deliverer';
import type { JobEventBus } from './domain/events/job-events';
import { DevIdentityProvider } from './infra/identity/dev-identity-provider';
import { OidcVerifier } from './infra/identity/oidc-verifier';
import { CallerUrlGuard } from './infra/http/caller-url-guard';
import { SafeHttpClient } from './infra/http/safe-http-client';
import { WebhookHttpSender } from './infra/http/webhook-http-sender';
import { DiskBlobStore } from './infra/media/disk-blob-store';
import { LocalFirstRateLimiter } from './infra/ratelimit/local-first-rate-limiter';
import { throttledWarn } from './infra/observability/throttled-warn';
import { LocalJobEventBus } from './infra/events/local-event-bus';
import { RedisJobEventBus } from './infra/events/redis-event-bus';
import { ProviderRegistry } from './providers/provider-registry';
import { SqlHistoryRepository } from './infra/db/repositories/sql-history';
import { SqlMediaRecords } from './infra/db/repositories/sql-media-records';
import { SqlResponseStore } from './infra/db/repositories/sql-response-store';
import { SqlVideoJobRepository } from './infra/db/repositories/sql-video-jobs';
import { SqlWebhookRepository } from './infra/db/repositories/sql-webhooks';
import { SqlWorkQueue } from './infra/db/repositories/sql-work-queue';
import { SqlAccountRepository } from './infra/db/repositories/sql-account-repository';
import { SqlIdempotencyRepository } from './infra/db/repositories/sql-idempotency-repository';
import { SqlKeyRepository } from './infra/db/repositories/sql-key-repository';
import { SqlKeySpend } from './infra/db/repositories/sql-key-spend';
import { SqlLeaseStore } from './infra/db/repositories/sql-lease-store';
import { SqlLedgerRepository } from './infra/db/repositories/sql-ledger-repository';
import { SqlRequestLog } from './infra/db/repositories/sql-request-log';
import { RequestLog } from './domain/requests/request-log';
import { OperatorAccess } from './domain/operators/operator-access';
import { AuditLog } from './domain/operators/audit-log';
import { OperatorActions } from './domain/operators/operator-actions';
import { OperatorReads } from './domain/operators/operator-reads';
import { SqlAuditLog } from './infra/db/repositories/sql-audit-log';
import { SqlOperatorReads } from './infra/db/repositories/sql-operator-reads';
import { openPurchases } from './infra/payments/purchases';
import { AccountEventFeed } from './infra/events/account-event-feed';
import type { Tracer } from './infra/observability/tracing';
import { NO_TRACING } from './domain/ports/tracing';

/** Every domain service, built once from the config with the port implementations it picked. */
export type Services = Awaited<ReturnType<typeof buildServices>>;

export async function buildServices(deps: {
  config: Config;
  db: Database;
  /** The hot path's executor for the charge batches (defaults to `db`). */
  hotDb?: SqlExecutor;
  redis?: Redis;
  logger: Logger;
  metrics: Metrics;
  publicBaseUrl: () => string;
  /** What every service keeps time with (the system's; a test's fake one to step time). */
  clock?: Clock;
  /** OpenTelemetry, when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracer?: Tracer;
}) {
  const { config, db, redis, logger, metrics, tracer } = deps;
  const tracing = tracer ?? NO_TRACING;
  const clock = deps.clock ?? systemClock;
  const catalog = Catalog.load(config.modelsFile);
  // Provider calls made by the worker (video submit and polls) run under a work lease, as webhook deliveries do.
  const leasedCalls = [...videoRouteCalls(catalog.data), { name: 'WEBHOOK_TIMEOUT_SECONDS', seconds: config.webhook.timeoutSeconds }];
  const workLeaseSeconds = effectiveLeaseSeconds(config.workLeaseSeconds, leasedCalls);
  const leaseIssues = leaseProblems(workLeaseSeconds, leasedCalls);
  if (leaseIssues.length > 0) throw new ConfigError(`Invalid configuration:\n  ${leaseIssues.join('\n  ')}`);

  let devIdentity: DevIdentityProvider | undefined;
  let identity: IdentityVerifier;
  if (config.oidc) identity = new OidcVerifier(config.oidc);
  else identity = devIdentity = await DevIdentityProvider.open(db);

  // While Redis is away: per-instance rate limits and local-only events, logged and counted.
  const warn = throttledWarn(logger);
  const redisDown = (operation: string) => (err: unknown) => {
    metrics.degraded.inc({ dependency: 'redis', operation });
    warn(`redis:${operation}`, { err: String(err) }, `Redis unreachable: ${operation} degraded`);
  };
  const limiter = new LocalFirstRateLimiter(redis, undefined, redisDown('rate_limit'), clock);
  const events: JobEventBus = redis ? new RedisJobEventBus(redis, redisDown('event_publish')) : new LocalJobEventBus();
  // One outbound client for media fetched from URLs: SSRF-checked after DNS, no redirects.
  const outbound = new SafeHttpClient({ allowLocal: false, defaultTimeoutMs: 60_000, maxResponseBytes: 500 * 1024 * 1024 });
  const webhookSender = new WebhookHttpSender({ allowLocal: config.webhook.allowLocal, timeoutSeconds: config.webhook.timeoutSeconds, tracer });
  const topic = (channel: string): TopicFeed => (redis ? new RedisTopicFeed(redis, channel) : new LocalTopicFeed());
  // One circuit breaker per upstream route; an instance that opens or closes one tells the others.
  const circuitChanges = topic('svc:circuit');
  const breakers = new CircuitBreakers({
    feed: circuitChanges,
    minCalls: config.circuitMinCalls,
    upstreamOf: (routeId) => upstreamDigest(catalog.data, routeId),
  });
  const attempts = upstreamAttemptReporter(metrics, logger);
  breakers.onState = (route, state) => attempts.circuit(route, state);
  const providers = new ProviderRegistry({
    simulatorVideoSeconds: config.simulatorVideoSeconds,
    now: () => clock.now(),
    secrets: config.secrets,
    fetchMedia: (url) => outbound.fetchMedia(url),
    routing: { breakers, report: (a) => attempts.report(a), tracing },
    propagate: tracer?.propagate,
  });
  // MEDIA_STORE: this instance's disk, or a bucket every instance reads and writes (the AWS SDK,
  // a fifth of a second to load, only then).
  const bucket = config.media.store === 's3' ? new (await import('./infra/media/s3-blob-store.js')).S3BlobStore(config.media.s3) : undefined;
  const media = await MediaLibrary.open(new SqlMediaRecords(db), bucket ?? new DiskBlobStore(join(config.dataDir, 'media')), deps.publicBaseUrl);
  const urls = new CallerUrlGuard({ webhookAllowLocal: config.webhook.allowLocal });
  // Keys authenticate from memory; a change anywhere drops them everywhere (see KeyCache).
  const keyChanges = topic('svc:key-changes');
  // A wrong secret is refused from memory whether its key id exists or not (see KeyDirectory).
  const keyRepository = new SqlKeyRepository(db);
  const keyDirectory = new KeyDirectory(keyRepository, keyChanges, clock);
  await keyDirectory
    .load()
    .catch((err) => warn('key directory', { err: String(err) }, 'key directory not loaded; keys are read from the database until it is'));
  const queue = new SqlWorkQueue(db, workLeaseSeconds);
  const webhooks = new SqlWebhookRepository(db);
  const expiryNotices = new KeyExpiryNotices(queue, keyRepository, webhooks, clock);
  const keys = new KeyService(keyRepository, (id) => catalog.has(id), urls, new KeyCache(keyChanges, clock), keyDirectory, clock, expiryNotices);
  const historyRepository = new SqlHistoryRepository(db);
  const history = new AccountHistory(historyRepository, webhooks, keys);
  // Rows of charged calls commit with their charges; the writer batches the rest off the calls' path.
  const requestLog = RequestLog.open(new SqlRequestLog(db), clock, config.requestLogDays, (message, detail) => warn(message, detail, message));
  await requestLog.start();
  // Chat and image calls are paid from per-instance credit leases, charges group-committed.
  const leaseStore = new SqlLeaseStore(db, deps.hotDb);
  const ledger = new Ledger(new SqlLedgerRepository());
  // On PostgreSQL a charge transaction gets CHARGE_DEADLINE_MS (5 s): past that the database is stalled or cut off.
  const { commitsInFlight, chargeDeadlineMs } = config.creditLeases;
  const chargeBatcher =
    db.dialect === 'pglite' ? new ChargeBatcher(leaseStore, 4, 1, 0, clock) : new ChargeBatcher(leaseStore, 0, commitsInFlight, chargeDeadlineMs, clock);
  const leaseRecalls = topic('svc:lease-recalls');
  const instanceId = newId('inst');
  const leaseBook = new LeaseBook(leaseStore, chargeBatcher, leaseRecalls, {
    instanceId,
    idleMs: config.creditLeases.idleSeconds * 1000,
    heartbeatMs: Math.max(200, (config.creditLeases.graceSeconds * 1000) / 6),
    graceSeconds: config.creditLeases.graceSeconds,
    wantFactor: 32,
    minWantMicro: MICRO_PER_CREDIT,
    onError: (what, err) => warn(what, { err: String(err) }, `${what} failed`),
    clock,
    // Charges of calls answered while the database could not take them, recorded once it can.
    journal: new FileChargeJournal({
      dir: join(config.dataDir, 'charge-journal'),
      instanceId,
      adoptAfterMs: config.creditLeases.graceSeconds * 1000,
      clock,
      onUnreadable: (file, lines) => logger.error({ file, lines }, 'charge journal: unreadable lines skipped'),
    }),
    onJournal: (event, detail) =>
      event === 'kept'
        ? logger.warn({ requestId: detail.requestId, err: String(detail.err) }, 'charge kept in the journal: the database could not take it')
        : logger.info({ charges: detail.count }, 'charges recorded from the journal'),
  });
  chargeBatcher.lingerWhile(() => leaseBook.inFlightFor() > 1);
  leaseBook.start();
  // An operator's removal of credits calls the account's leases back first (AccountService.adjustCredits).
  const accountRepository = new SqlAccountRepository(db);
  const accounts = new AccountService(accountRepository, ledger, leaseBook);
  const accountWebhook = new AccountWebhook(accountRepository, urls);
  const accountAuth = new AccountAuthenticator(identity, accounts);
  // Buying credits: a refund's take-back calls the account's leases back first, as a removal does.
  const consoleUrl = () => `${deps.publicBaseUrl()}/console/`;
  // A purchase paid, refunded or closed, told to its owner's live views on every instance.
  const accountEvents = new AccountEventFeed(topic('svc:account-events'));
  const purchases = await openPurchases(config, db, { accounts, ledger, webhooks, events: accountEvents, leases: leaseBook, clock, consoleUrl });
  // What keys spent in their budgets' periods, for their records and GET /v1/key.
  const spending = new KeySpending(new SqlKeySpend(db), keys, accounts);
  const streamStarts = new StreamStarts(
    leaseStore,
    STREAM_START_TIMES,
    (err) => warn('stream starts', { err: String(err) }, 'stream starts: a write failed; tried again'),
    clock,
  );
  const billing = new Billing(leaseBook, streamStarts, tracing);
  const idempotency = new IdempotencyService(new SqlIdempotencyRepository(db), {
    instanceId,
    graceSeconds: config.creditLeases.graceSeconds,
    clock,
    onDropped: (count) =>
      logger.warn({ count }, 'idempotency: responses the database could not take let go (memory bound); their keys free themselves after the lease grace'),
  });
  const chat = new ChatService(catalog, providers, billing, limiter, urls, tracing);
  const responses = new ResponsesService(chat, new SqlResponseStore(db));
  const images = new ImageService(catalog, providers, billing, limiter, media, new TestKeyBudget(), clock);

  const jobs = new SqlVideoJobRepository(db, (mediaId) => media.urlFor(mediaId, 'video/mp4'));
  const finisher = new JobFinisher(jobs, queue, webhooks, events, ledger, (job, webhook) => {
    metrics.videoJobs.inc({ status: job.status });
    logger.info({ jobId: job.id, status: job.status, webhook }, 'video job finished');
  });
  // The simulator finishes after SIMULATOR_VIDEO_SECONDS: poll it briskly; upstreams every VIDEO_POLL_SECONDS.
  const pollEverySeconds = (provider: string) =>
    provider === 'simulator' ? Math.min(0.5, Math.max(0.05, config.simulatorVideoSeconds / 4)) : config.videoPollSeconds;
  const firstPollSeconds = (provider: string) => (provider === 'simulator' ? config.simulatorVideoSeconds : config.videoPollSeconds);
  const runner = new VideoJobRunner({ catalog, providers, jobs, queue, finisher, media, events, pollEverySeconds, firstPollSeconds });
  const deliverer = new WebhookDeliverer(
    webhooks,
    queue,
    webhookSender,
    config.webhook.retryDelaysSeconds,
    (a) => {
      metrics.webhookAttempts.inc({ outcome: a.outcome });
      logger.info(a, 'webhook delivery attempt');
    },
    clock,
  );
  const holdExpiry = holdExpiryHandler(db, ledger, queue);
  const handlers = {
    video_poll: runner.handle,
    video_cancel: runner.cancelUpstream,
    webhook_delivery: deliverer.handle,
    hold_expiry: holdExpiry,
    key_expiring: expiryNotices.handle,
  };
  const worker = new Worker(queue, handlers, logger, {
    batchSize: 20,
    maxIdleMs: 500,
    concurrency: config.workerConcurrency,
    leaseSeconds: workLeaseSeconds,
    clock,
  });
  const video = new VideoService({
    catalog,
    providers,
    limiter,
    urls,
    jobs,
    queue,
    events,
    timeoutSeconds: config.videoJobTimeoutSeconds,
    nudge: () => worker.nudge(),
    leases: leaseBook,
    ledger,
    clock,
    tracing,
  });
  const videos = new OpenAIVideos({ catalog, video, urls, media });
  const videoControls = new VideoControls({ video, jobs, finisher, media, nudge: () => worker.nudge() });

  // The catalog read again on POST /admin/catalog/reload or SIGHUP, on every instance of the feed.
  const catalogChanges = topic('svc:catalog');
  const catalogReload = new CatalogReloader({
    catalog,
    modelsFile: config.modelsFile,
    feed: catalogChanges,
    instanceId,
    // A video route's call must fit in the work lease this process runs with.
    problems: (data) =>
      leaseProblems(workLeaseSeconds, videoRouteCalls(data)).map((p) => `${p} (the work lease is set at start-up: restart to take this catalog)`),
    onRemoteFailure: (err) => logger.error({ err: String(err) }, 'catalog reload asked by another instance failed here; the running catalog stays'),
  });

  // Operators: ADMIN_TOKEN or a listed subject's ID token; each action audited in its own transaction.
  const operators = new OperatorAccess({ adminToken: config.adminToken, subjects: config.adminSubjects }, identity);
  const audit = new AuditLog(new SqlAuditLog(db));
  const operatorActions = new OperatorActions({ accounts, audit, catalog, catalogReload });
  const operatorReads = new OperatorReads({ operators: new SqlOperatorReads(db), accounts, history: historyRepository, webhooks, catalog, breakers });

  return {
    catalog,
    catalogReload,
    operators,
    audit,
    operatorActions,
    operatorReads,
    /** The work lease this process runs with (WORK_LEASE_SECONDS, or derived from the routes). */
    workLeaseSeconds,
    breakers,
    identity,
    devIdentity,
    accounts,
    accountWebhook,
    accountAuth,
    purchases,
    keys,
    spending,
    history,
    requestLog,
    webhooks,
    media,
    billing,
    leaseBook,
    ledger,
    chargeBatcher,
    keyChanges,
    chat,
    responses,
    images,
    video,
    videos,
    videoControls,
    /** The worker's video handlers and its queue, for tests that run a job's work themselves. */
    videoRunner: runner,
    workQueue: queue,
    idempotency,
    events,
    accountEvents,
    worker,
    async close(): Promise<void> {
      await leaseBook.stop();
      // After the charges: what the writer keeps is written while the database is still open.
      await requestLog.stop();
      streamStarts.stop();
      idempotency.stop();
      await worker.stop();
      await events.close();
      await accountEvents.close();
      keyDirectory.stop();
      await keyChanges.close();
      await circuitChanges.close();
      await catalogChanges.close();
      // Its Redis subscriber connection would otherwise outlive the gateway.
      await leaseRecalls.close();
      await providers.close();
      await outbound.close();
      await webhookSender.close();
      bucket?.close();
    },
  };
}
