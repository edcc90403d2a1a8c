import 'reflect-metadata';
import { ConfigError, loadConfig } from './config';
import { createGateway } from './gateway';
import { ensureDemoAccount } from './demo-account';

/** `npm start`: parse the config, start the gateway, print the demo credentials once, drain on SIGTERM. */
async function main(): Promise<void> {
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
  const gateway = await createGateway(config);
  const origin = await gateway.listen();
  gateway.logger.info({ origin, database: config.databaseUrl ? 'postgresql' : 'pglite', redis: Boolean(config.redisUrl) }, 'gateway listening');
  await ensureDemoAccount(gateway, origin);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    gateway.logger.info({ signal }, 'shutting down: draining requests and workers');
    gateway.close().then(
      () => process.exit(0),
      (err) => {
        gateway.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((err) => {
  process.stderr.write(`gateway failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
