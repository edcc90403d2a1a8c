import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../src/config';
import { buildServices, type Services } from '../../src/services';
import { openDatabase, type DatabaseHandle } from '../../src/infra/db/orm';
import { createRedis } from '../../src/infra/redis/redis-client';
import { createLogger } from '../../src/infra/observability/logger';
import { Metrics } from '../../src/infra/observability/metrics';
import { microToCredits } from '../../src/domain/shared/money';
import { expectLedgerInvariants } from './ledger-invariants';
import { useFixture } from './fixture';
import { newTestStore } from './test-store';
import type { Clock } from '../../src/domain/ports/clock';

type Env = Record<string, string | undefined>;

/** An account the services made: its id is all a test needs. */
export interface AccountRef {
  id: string;
}

/** The integration tier's unit: the domain services over a migrated database (and Redis when REDIS_URL is set), no HTTP. */
export interface TestServices {
  services: Services;
  database: DatabaseHandle;
  config: Config;
  /** A fresh account holding `credits`, granted as the operator grants them. */
  newAccount(credits?: number): Promise<AccountRef>;
  /** Creates a key of the account, as its owner does, and answers its secret. */
  newKey(account: AccountRef, body?: Record<string, unknown>): Promise<{ id: string; secret: string }>;
  /** The balance the account's owner is shown, in credits. */
  balance(account: AccountRef): Promise<number>;
  close(): Promise<void>;
}

/** `clock`: what the services keep time with (a fake clock the test steps; the system's by default). */
export async function startTestServices(env: Env = {}, options: { clock?: Clock } = {}): Promise<TestServices> {
  const store = await newTestStore('services');
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: store.dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: store.databaseUrl,
    REDIS_URL: process.env.REDIS_URL,
    ...env,
  });
  const logger = createLogger(config.logLevel);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const redis = config.redisUrl ? createRedis(config.redisUrl, 'svc-test-services') : undefined;
  const services = await buildServices({
    config,
    db: database.db,
    hotDb: database.hot,
    redis,
    logger,
    metrics: new Metrics(),
    publicBaseUrl: () => 'http://127.0.0.1',
    clock: options.clock,
  });
  return {
    services,
    database,
    config,
    async newAccount(credits = 0) {
      const account = await services.accounts.findOrCreate({ issuer: 'test', subject: `user-${randomBytes(6).toString('hex')}` });
      if (credits !== 0) await services.accounts.adjustCredits(account.id, { credits, reason: 'test' });
      return { id: account.id };
    },
    async newKey(account, body = {}) {
      const { key, secret } = await services.keys.create(account.id, body);
      return { id: key.id, secret };
    },
    async balance(account) {
      return microToCredits((await services.accounts.get(account.id)).balanceMicro);
    },
    async close() {
      await services.close();
      redis?.disconnect();
      await database.close();
      await store.remove();
    },
  };
}

/** The services for a file: started before its tests, checked for the ledger's invariants and closed after them. */
export function useTestServices(env: Env = {}, options: { ledgerInvariants?: boolean; clock?: Clock } = {}): TestServices {
  return useFixture(
    'useTestServices',
    () => startTestServices(env, { clock: options.clock }),
    async (t) => {
      try {
        if (options.ledgerInvariants !== false) await expectLedgerInvariants(t.database.db);
      } finally {
        await t.close();
      }
    },
  );
}
