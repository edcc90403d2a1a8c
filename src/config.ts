import { z } from 'zod';
import { leaseProblems } from './domain/work/lease-policy';
import { trustedProxies } from './infra/http/client-address';
import { checkoutTermProblems, type CheckoutTerms } from './domain/purchases/checkout-terms';
import type { S3Settings } from './infra/media/s3-blob-store';

/**
 * Configuration is read from the environment once, at start-up, into a typed object; nothing else
 * reads process.env. A wrong value stops the service with a message that names the variable.
 */
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const positiveSeconds = (fallback: number) =>
  z.coerce
    .number()
    .positive()
    .max(86_400 * 7)
    .default(fallback);

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().min(0).max(65535).int().default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: optionalString.refine((v) => v === undefined || /^postgres(ql)?:\/\//.test(v), {
    message: 'must be a postgres:// URL',
  }),
  REDIS_URL: optionalString.refine((v) => v === undefined || /^rediss?:\/\//.test(v), {
    message: 'must be a redis:// URL',
  }),
  DATA_DIR: z.string().min(1).default('./data'),
  PUBLIC_BASE_URL: optionalString.refine((v) => v === undefined || /^https?:\/\/[^/]+/.test(v), {
    message: 'must be an http(s) origin',
  }),
  ADMIN_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: 'must be at least 16 characters',
  }),
  /**
   * Operators by identity: comma-separated `sub` values of ID tokens from the configured issuer
   * (or the development provider). Each names exactly one subject; nothing is a pattern.
   */
  ADMIN_SUBJECTS: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const subjects = v
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '');
      const bad = subjects.find((s) => s.length > 255 || /[\s\p{C}]/u.test(s));
      if (bad !== undefined) {
        ctx.addIssue({ code: 'custom', message: 'must be comma-separated subjects without spaces or control characters, each at most 255 characters' });
        return z.NEVER;
      }
      return [...new Set(subjects)];
    }),
  OIDC_ISSUER: optionalString,
  OIDC_AUDIENCE: optionalString,
  OIDC_JWKS_URL: optionalString,
  /** The console's public client id for the authorization-code flow with PKCE. */
  OIDC_CLIENT_ID: optionalString,
  /** Seconds past an ID token's `exp` (the issuer's clock and ours disagree) it is still accepted. */
  OIDC_CLOCK_TOLERANCE_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  MODELS_FILE: optionalString,
  WEBHOOK_RETRY_DELAYS: z
    .string()
    .default('5,25')
    .transform((v, ctx) => {
      const parts = v.split(',').map((p) => Number(p.trim()));
      if (parts.some((n) => !Number.isFinite(n) || n < 0)) {
        ctx.addIssue({ code: 'custom', message: 'must be comma-separated non-negative seconds' });
        return z.NEVER;
      }
      return parts;
    }),
  WEBHOOK_TIMEOUT_SECONDS: positiveSeconds(10),
  /** `false`: start without migrating (the migrations are a step of their own: `main.js migrate`); a schema behind this version stops the start. */
  MIGRATE_ON_START: z
    .enum(['true', 'false', '1', '0'])
    .default('true')
    .transform((v) => v === 'true' || v === '1'),
  WEBHOOK_ALLOW_LOCAL: z
    .enum(['', '0', '1', 'true', 'false'])
    .default('')
    .transform((v) => v === '1' || v === 'true'),
  SIMULATOR_VIDEO_SECONDS: z.coerce.number().min(0).max(3600).default(5),
  VIDEO_JOB_TIMEOUT_SECONDS: positiveSeconds(900),
  /** Internal tuning (not in CONTRACT): how long a claimed work row stays leased to one instance. */
  WORK_LEASE_SECONDS: z.coerce.number().min(1).max(3600).optional(),
  /** Internal tuning: concurrent work items per instance; 0 runs an API-only instance with no worker. */
  WORKER_CONCURRENCY: z.coerce.number().min(0).max(1000).int().default(32),
  /** Internal tuning: how often an upstream video job is polled. */
  VIDEO_POLL_SECONDS: z.coerce.number().min(0.1).max(600).default(5),
  /** On SIGTERM: how long requests in flight may finish before streams are ended and connections cut. */
  SHUTDOWN_DRAIN_SECONDS: z.coerce.number().min(0).max(3600).default(25),
  /**
   * How long a client may take to send a whole request (headers and body); past it the request is
   * answered 408 and the connection closed, so slow senders cannot hold sockets (and the drain) for
   * long. 300 s carries the 50 MB multipart cap at 170 kB/s.
   */
  REQUEST_RECEIVE_SECONDS: z.coerce.number().min(1).max(3600).default(300),
  /**
   * How long a stream may wait on a client that reads nothing (its socket full); past it the
   * stream is cut and billed what it sent, so a reader that stopped cannot hold its upstream,
   * its credits and the gateway's memory for as long as its socket stays open.
   */
  STREAM_STALL_SECONDS: z.coerce.number().min(1).max(3600).default(60),
  /** On SIGTERM, before the drain: how long to keep serving while /healthz answers 503 (a balancer's check interval or more). */
  SHUTDOWN_NOTICE_SECONDS: z.coerce.number().min(0).max(600).default(0),
  /** An event-loop stall longer than this fails /livez for a minute (a wedged process); 0: never. */
  LIVENESS_STALL_SECONDS: z.coerce.number().min(0).max(600).default(10),
  /** Internal tuning: a credit lease no call used for this long goes back to its account. */
  LEASE_IDLE_SECONDS: z.coerce.number().min(0.05).max(3600).default(30),
  /** Internal tuning: a credit lease whose instance stopped heartbeating this long is closed by another. */
  LEASE_GRACE_SECONDS: z.coerce.number().min(1).max(3600).default(30),
  /**
   * Internal tuning: charge transactions in flight at once on PostgreSQL (the embedded database
   * always uses one). More stop calls queueing behind the commit ahead of theirs but make smaller
   * batches, so more commits: worth it when PostgreSQL has cores of its own.
   */
  CHARGE_COMMITS_IN_FLIGHT: z.coerce.number().min(1).max(16).int().default(1),
  CHARGE_DEADLINE_MS: z.coerce.number().min(1).max(600_000).int().default(5_000),
  /** Internal tuning: the calls in a route's 30 s window before its circuit may open (CONTRACT's 5). */
  UPSTREAM_CIRCUIT_MIN_CALLS: z.coerce.number().int().min(1).max(1_000_000).default(5),
  /**
   * GraphQL WebSocket connections one client address (IPv6: one /64) may hold open on an
   * instance; 0: no cap. 1,000: a browser or an SDK holds one socket (up to 20 operations each),
   * a NATed office or a backend a few hundred, while one address alone cannot take more than a
   * tenth of an instance sized for 10,000 sockets. Behind a proxy set TRUSTED_PROXIES, or every
   * connection counts against the proxy's address.
   */
  WS_MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().min(0).max(1_000_000).int().default(1000),
  /** Proxies (addresses or CIDR ranges, comma-separated) whose X-Forwarded-For names the client. */
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const ranges = v
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '');
      try {
        trustedProxies(ranges);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
      return ranges;
    }),
  /** Where media are kept: `disk` (under DATA_DIR) or `s3` (a bucket every instance shares). */
  MEDIA_STORE: z.enum(['disk', 's3']).default('disk'),
  S3_BUCKET: optionalString.refine((v) => v === undefined || /^[A-Za-z0-9][A-Za-z0-9._-]{2,254}$/.test(v), {
    message: 'must be a bucket name (letters, digits, dots, hyphens, underscores; 3 or more)',
  }),
  S3_ENDPOINT: optionalString.refine((v) => v === undefined || /^https?:\/\/[^/]+/.test(v), {
    message: 'must be an http(s) URL',
  }),
  S3_REGION: optionalString.transform((v) => v ?? 'us-east-1'),
  S3_FORCE_PATH_STYLE: z
    .enum(['', '0', '1', 'true', 'false'])
    .default('')
    .transform((v) => v === '1' || v === 'true'),
  /** The standard AWS variables; unset, the SDK's own chain finds credentials (a role, a web identity, a profile). */
  AWS_ACCESS_KEY_ID: optionalString,
  AWS_SECRET_ACCESS_KEY: optionalString,
  AWS_SESSION_TOKEN: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Days the request log keeps its rows (one partition a day); 0 turns the log off. */
  REQUEST_LOG_DAYS: z.coerce.number().int().min(0).max(3650).default(30),
  /** Buying credits with Stripe Checkout: both secrets, or neither (checkout answers 404). */
  STRIPE_SECRET_KEY: optionalString.refine((v) => v === undefined || /^(sk|rk)_(test|live)_\S+$/.test(v), {
    message: 'must be a secret or restricted key (sk_test_…, sk_live_…, rk_…)',
  }),
  STRIPE_WEBHOOK_SECRET: optionalString.refine((v) => v === undefined || /^whsec_\S+$/.test(v), {
    message: "must be the webhook endpoint's signing secret (whsec_…)",
  }),
  STRIPE_API_BASE: optionalString.refine((v) => v === undefined || /^https?:\/\/[^/?#]+\/?$/.test(v), {
    message: 'must be an http(s) origin, without a path',
  }),
  /** USD per credit, at most six decimals; read as micro-dollars. */
  CREDIT_PRICE_USD: optionalString
    .refine((v) => v === undefined || (/^\d{1,4}(\.\d{1,6})?$/.test(v) && Number(v) > 0), {
      message: 'must be a positive USD amount with at most six decimals',
    })
    .transform((v) => Math.round(Number(v ?? '0.01') * 1_000_000)),
  CREDIT_PURCHASE_MIN: z.coerce.number().int().min(1).max(1e9).default(100),
  CREDIT_PURCHASE_MAX: z.coerce.number().int().min(1).max(1e9).default(100_000),
  /** The collector's OTLP/HTTP base URL (spans go to its `/v1/traces`); unset, tracing is off and no SDK is loaded. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.refine((v) => v === undefined || /^https?:\/\/[^/]+/.test(v), {
    message: 'must be an http(s) URL, e.g. http://otel-collector:4318',
  }),
  /** Headers sent with each export (a vendor's API key, say): `name=value` pairs, comma-separated, values URL-encoded. */
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .default('')
    .transform((v, ctx) => {
      const headers: Record<string, string> = {};
      for (const pair of v.split(',').filter((p) => p.trim() !== '')) {
        const at = pair.indexOf('=');
        const name = pair.slice(0, at).trim();
        if (at < 1 || !/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name)) {
          ctx.addIssue({ code: 'custom', message: 'must be name=value pairs, comma-separated' });
          return z.NEVER;
        }
        try {
          headers[name] = decodeURIComponent(pair.slice(at + 1).trim());
        } catch {
          ctx.addIssue({ code: 'custom', message: `the value of ${name} is not URL-encoded` });
          return z.NEVER;
        }
      }
      return headers;
    }),
  OTEL_SERVICE_NAME: z.string().trim().min(1).default('svc-gateway'),
  /** The share of traces started here that are kept (parent-based: a caller's sampled trace is always followed). */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
  /** Milliseconds between span exports. */
  OTEL_BSP_SCHEDULE_DELAY: z.coerce.number().int().min(1).max(600_000).default(5_000),
});

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  databaseUrl?: string;
  redisUrl?: string;
  dataDir: string;
  /** MEDIA_STORE and its bucket: disk under DATA_DIR/media, or an S3-compatible bucket. */
  media: { store: 'disk' } | { store: 's3'; s3: S3Settings };
  publicBaseUrl?: string;
  adminToken?: string;
  /** ADMIN_SUBJECTS: the `sub`s whose ID tokens are operators'; empty: none. */
  adminSubjects: string[];
  oidc?: { issuer: string; audience?: string; jwksUrl?: string; clientId?: string; clockToleranceSeconds?: number };
  modelsFile?: string;
  webhook: { retryDelaysSeconds: number[]; timeoutSeconds: number; allowLocal: boolean };
  migrateOnStart: boolean;
  simulatorVideoSeconds: number;
  videoJobTimeoutSeconds: number;
  logLevel: string;
  /** WORK_LEASE_SECONDS as set; unset, the lease is derived from the calls made under it (lease-policy.ts). */
  workLeaseSeconds: number | undefined;
  workerConcurrency: number;
  videoPollSeconds: number;
  shutdownDrainSeconds: number;
  requestReceiveSeconds: number;
  streamStallSeconds: number;
  shutdownNoticeSeconds: number;
  livenessStallSeconds: number;
  creditLeases: { idleSeconds: number; graceSeconds: number; commitsInFlight: number; chargeDeadlineMs: number };
  circuitMinCalls: number;
  /** REQUEST_LOG_DAYS: how long request-log rows are kept; 0, the log is off. */
  requestLogDays: number;
  wsMaxConnectionsPerAddress: number;
  /** TRUSTED_PROXIES: addresses or CIDR ranges; empty: the peer is the client. */
  trustedProxies: string[];
  /** STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET (and STRIPE_API_BASE); unset: buying credits is off. */
  stripe?: { secretKey: string; webhookSecret: string; apiBase?: string };
  /** CREDIT_PRICE_USD (as micro-dollars), CREDIT_PURCHASE_MIN and CREDIT_PURCHASE_MAX. */
  checkout: CheckoutTerms;
  /** OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracing?: TracingConfig;
  /** Every environment variable, for upstream API keys named in the catalog (`apiKeyEnv`). */
  secrets: Readonly<Record<string, string | undefined>>;
}

export interface TracingConfig {
  /** Where spans are sent: the endpoint's `/v1/traces`. */
  tracesUrl: string;
  /** Sent with each export; may hold a credential, so never logged. */
  headers: Record<string, string>;
  serviceName: string;
  sampleRatio: number;
  exportDelayMs: number;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const c = parsed.data;
  if (c.OIDC_ISSUER === undefined && c.NODE_ENV === 'production') {
    throw new ConfigError('Invalid configuration:\n  OIDC_ISSUER: required when NODE_ENV=production (the development identity provider is refused)');
  }
  if (c.OIDC_ISSUER !== undefined && c.OIDC_AUDIENCE === undefined && c.NODE_ENV === 'production') {
    // Without an audience, an ID token the issuer minted for any other application would do.
    throw new ConfigError('Invalid configuration:\n  OIDC_AUDIENCE: required when OIDC_ISSUER is set and NODE_ENV=production');
  }
  const lease =
    c.WORK_LEASE_SECONDS === undefined ? [] : leaseProblems(c.WORK_LEASE_SECONDS, [{ name: 'WEBHOOK_TIMEOUT_SECONDS', seconds: c.WEBHOOK_TIMEOUT_SECONDS }]);
  if (lease.length > 0) throw new ConfigError(`Invalid configuration:\n  ${lease.join('\n  ')}`);
  if ((c.OIDC_AUDIENCE || c.OIDC_JWKS_URL || c.OIDC_CLIENT_ID) && !c.OIDC_ISSUER) {
    throw new ConfigError('Invalid configuration:\n  OIDC_ISSUER: required when OIDC_AUDIENCE, OIDC_JWKS_URL or OIDC_CLIENT_ID is set');
  }
  // A key without the signing secret would take payments whose webhooks could never be verified.
  if (c.STRIPE_SECRET_KEY !== undefined && c.STRIPE_WEBHOOK_SECRET === undefined) {
    throw new ConfigError('Invalid configuration:\n  STRIPE_WEBHOOK_SECRET: required when STRIPE_SECRET_KEY is set');
  }
  if (c.STRIPE_SECRET_KEY === undefined && (c.STRIPE_WEBHOOK_SECRET !== undefined || c.STRIPE_API_BASE !== undefined)) {
    throw new ConfigError('Invalid configuration:\n  STRIPE_SECRET_KEY: required when STRIPE_WEBHOOK_SECRET or STRIPE_API_BASE is set');
  }
  const checkout = { usdPerCreditMicro: c.CREDIT_PRICE_USD, min: c.CREDIT_PURCHASE_MIN, max: c.CREDIT_PURCHASE_MAX };
  const terms = checkoutTermProblems(checkout);
  if (terms.length > 0) throw new ConfigError(`Invalid configuration:\n  ${terms.join('\n  ')}`);
  const media = mediaStore(c);
  return {
    env: c.NODE_ENV,
    port: c.PORT,
    host: c.HOST,
    databaseUrl: c.DATABASE_URL,
    redisUrl: c.REDIS_URL,
    dataDir: c.DATA_DIR,
    media,
    publicBaseUrl: c.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    adminToken: c.ADMIN_TOKEN,
    adminSubjects: c.ADMIN_SUBJECTS,
    oidc: c.OIDC_ISSUER
      ? {
          issuer: c.OIDC_ISSUER,
          audience: c.OIDC_AUDIENCE,
          jwksUrl: c.OIDC_JWKS_URL,
          clientId: c.OIDC_CLIENT_ID,
          clockToleranceSeconds: c.OIDC_CLOCK_TOLERANCE_SECONDS,
        }
      : undefined,
    modelsFile: c.MODELS_FILE,
    migrateOnStart: c.MIGRATE_ON_START,
    webhook: {
      retryDelaysSeconds: c.WEBHOOK_RETRY_DELAYS,
      timeoutSeconds: c.WEBHOOK_TIMEOUT_SECONDS,
      allowLocal: c.WEBHOOK_ALLOW_LOCAL,
    },
    simulatorVideoSeconds: c.SIMULATOR_VIDEO_SECONDS,
    videoJobTimeoutSeconds: c.VIDEO_JOB_TIMEOUT_SECONDS,
    circuitMinCalls: c.UPSTREAM_CIRCUIT_MIN_CALLS,
    requestLogDays: c.REQUEST_LOG_DAYS,
    creditLeases: {
      idleSeconds: c.LEASE_IDLE_SECONDS,
      graceSeconds: c.LEASE_GRACE_SECONDS,
      commitsInFlight: c.CHARGE_COMMITS_IN_FLIGHT,
      chargeDeadlineMs: c.CHARGE_DEADLINE_MS,
    },
    wsMaxConnectionsPerAddress: c.WS_MAX_CONNECTIONS_PER_ADDRESS,
    trustedProxies: c.TRUSTED_PROXIES,
    stripe:
      c.STRIPE_SECRET_KEY && c.STRIPE_WEBHOOK_SECRET
        ? { secretKey: c.STRIPE_SECRET_KEY, webhookSecret: c.STRIPE_WEBHOOK_SECRET, apiBase: c.STRIPE_API_BASE?.replace(/\/$/, '') }
        : undefined,
    checkout,
    tracing: c.OTEL_EXPORTER_OTLP_ENDPOINT
      ? {
          tracesUrl: `${c.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`,
          headers: c.OTEL_EXPORTER_OTLP_HEADERS,
          serviceName: c.OTEL_SERVICE_NAME,
          sampleRatio: c.OTEL_TRACES_SAMPLER_ARG,
          exportDelayMs: c.OTEL_BSP_SCHEDULE_DELAY,
        }
      : undefined,
    logLevel: c.LOG_LEVEL,
    workLeaseSeconds: c.WORK_LEASE_SECONDS,
    workerConcurrency: c.WORKER_CONCURRENCY,
    videoPollSeconds: c.VIDEO_POLL_SECONDS,
    shutdownDrainSeconds: c.SHUTDOWN_DRAIN_SECONDS,
    requestReceiveSeconds: c.REQUEST_RECEIVE_SECONDS,
    streamStallSeconds: c.STREAM_STALL_SECONDS,
    shutdownNoticeSeconds: c.SHUTDOWN_NOTICE_SECONDS,
    livenessStallSeconds: c.LIVENESS_STALL_SECONDS,
    secrets: env,
  };
}

/** MEDIA_STORE's choice with its bucket; an S3 setting without MEDIA_STORE=s3 would go unused, so it stops start-up. */
function mediaStore(c: z.infer<typeof schema>): Config['media'] {
  const refuse = (line: string) => new ConfigError(`Invalid configuration:\n  ${line}`);
  if (c.MEDIA_STORE === 'disk') {
    const set = (['S3_BUCKET', 'S3_ENDPOINT'] as const).filter((name) => c[name] !== undefined);
    if (set.length > 0) throw refuse(`MEDIA_STORE: must be s3 when ${set.join(' or ')} is set (media would stay on this instance's disk)`);
    return { store: 'disk' };
  }
  if (c.S3_BUCKET === undefined) throw refuse('S3_BUCKET: required when MEDIA_STORE=s3');
  if ((c.AWS_ACCESS_KEY_ID === undefined) !== (c.AWS_SECRET_ACCESS_KEY === undefined)) {
    throw refuse(
      `${c.AWS_ACCESS_KEY_ID === undefined ? 'AWS_ACCESS_KEY_ID' : 'AWS_SECRET_ACCESS_KEY'}: required with the other one (or neither, for the SDK's own credentials)`,
    );
  }
  const credentials =
    c.AWS_ACCESS_KEY_ID !== undefined && c.AWS_SECRET_ACCESS_KEY !== undefined
      ? { accessKeyId: c.AWS_ACCESS_KEY_ID, secretAccessKey: c.AWS_SECRET_ACCESS_KEY, ...(c.AWS_SESSION_TOKEN ? { sessionToken: c.AWS_SESSION_TOKEN } : {}) }
      : undefined;
  return {
    store: 's3',
    s3: { bucket: c.S3_BUCKET, region: c.S3_REGION, endpoint: c.S3_ENDPOINT, forcePathStyle: c.S3_FORCE_PATH_STYLE, credentials },
  };
}
