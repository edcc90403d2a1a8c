import type { Config } from './config';
import { openDatabase } from './infra/db/orm';
import { createLogger } from './infra/observability/logger';

/**
 * `node dist/src/main.js migrate` (`npm run migrate`): applies the migrations and the database
 * functions, under the same advisory lock as a start-up, says what it applied, and exits; run once
 * per deploy (a Kubernetes Job) with the instances started with MIGRATE_ON_START=false.
 */
export async function migrateCommand(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel);
  let applied = { migrations: [] as string[], functions: [] as string[] };
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, onMigrated: (a) => (applied = a) });
  await database.close();
  logger.info(
    { database: config.databaseUrl ? 'postgresql' : 'pglite', migrations: applied.migrations, functions: applied.functions },
    applied.migrations.length + applied.functions.length === 0 ? 'the database is current: nothing to apply' : 'migrations applied',
  );
}
