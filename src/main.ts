import 'reflect-metadata';
import { ConfigError, loadConfig } from './config';
import { createGateway } from './gateway';
import { ensureDemoAccount } from './demo-account';
import { tuneGcForRequestServing } from './infra/runtime/gc-tuning';
import { SchemaBehind } from './infra/db/orm';
import { migrateCommand } from './migrate-command';

/** `npm start`: parse the config, start the gateway, print the demo credentials once, drain on SIGTERM. With `migrate`, apply the migrations and exit. */
async function main(): Promise<void> {
  tuneGcForRequestServing();
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  if (process.argv[2] === 'migrate') return migrateCommand(config);
  // Nothing that escapes a handler may take the process down silently (see the handlers below).
  process.on('unhandledRejection', (reason) => {
    process.stderr.write(`unhandled rejection: ${reason instanceof Error ? reason.stack : String(reason)}\n`);
  });
  const gateway = await createGateway(config);
  process.removeAllListeners('unhandledRejection');
  // A rejection nobody handled is logged; the request that caused it already has its
  // answer from the error middleware, so the process keeps serving.
  process.on('unhandledRejection', (reason) => {
    gateway.logger.error({ err: reason }, 'unhandled promise rejection');
  });
  // The signals are handled before the listener opens: one that comes as soon as /healthz answers
  // (a deploy's SIGTERM, an operator's SIGHUP) must not meet the default action and end the process.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    gateway.logger.info({ signal }, 'shutting down: draining requests and workers');
    // Whatever happens during the drain, the process is gone shortly after its deadline.
    setTimeout(() => process.exit(1), (config.shutdownNoticeSeconds + config.shutdownDrainSeconds + 15) * 1000).unref();
    gateway.close().then(
      () => process.exit(process.exitCode ?? 0),
      (err) => {
        gateway.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  // An exception thrown outside any request leaves the process in an unknown state: log it,
  // drain what runs, exit non-zero and let the supervisor restart it.
  process.on('uncaughtException', (err) => {
    gateway.logger.fatal({ err }, 'uncaught exception; shutting down');
    process.exitCode = 1;
    stop('uncaughtException');
  });
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGHUP re-reads MODELS_FILE, as POST /admin/catalog/reload does (and tells the other instances).
  process.on('SIGHUP', () => {
    gateway.services.catalogReload.reload().then(
      ({ models }) => gateway.logger.info({ models }, 'catalog reloaded'),
      (err: unknown) => gateway.logger.error({ err: String((err as Error).message ?? err) }, 'catalog reload refused; the running catalog stays'),
    );
  });

  const origin = await gateway.listen();
  gateway.logger.info({ origin, database: config.databaseUrl ? 'postgresql' : 'pglite', redis: Boolean(config.redisUrl) }, 'gateway listening');
  await ensureDemoAccount(gateway, origin);
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    process.exit(2);
  }
  if (err instanceof SchemaBehind) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`gateway failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
