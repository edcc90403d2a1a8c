/**
 * Two `npm start` processes sharing a scratch PostgreSQL database, Redis and a data directory,
 * with svc-chat-1 routed to a fake upstream the test steers: for what happens when one of them
 * dies. Runs only with DATABASE_URL and REDIS_URL (CI's second pass).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildGateway, type ChildGateway } from './child-gateway';
import { freePort } from './free-port';
import { pollUntil } from './poll';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from './fake-openai-upstream';
import { writeModelsFile } from './models-file';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { postgresTemplate } from './database-template';

export interface TwoGateways {
  a: ChildGateway;
  b: ChildGateway;
  upstream: FakeOpenAIUpstream;
  databaseUrl: string;
  dataDir: string;
  /** The demo account's live key, which the first of the two printed. */
  liveKey(): Promise<string>;
  /** Stops what still runs (a killed one is skipped), drops the database. */
  close(): Promise<void>;
}

export async function startTwoGateways(name: string, env: Record<string, string> = {}): Promise<TwoGateways> {
  const scratch = await createScratchDatabase(process.env.DATABASE_URL!, `gw_${name}`, postgresTemplate());
  const dataDir = mkdtempSync(join(tmpdir(), `gw-${name}-`));
  const upstream = await startFakeOpenAIUpstream();
  const models = writeModelsFile({ 'svc-chat-1': { provider: 'openai-compatible', upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 60 } });
  const shared = { DATABASE_URL: scratch.url, REDIS_URL: process.env.REDIS_URL, DATA_DIR: dataDir, MODELS_FILE: models.path, WORKER_CONCURRENCY: '0', ...env };
  const a = await startChildGateway(shared, await freePort());
  const b = await startChildGateway(shared, await freePort());
  return {
    a,
    b,
    upstream,
    databaseUrl: scratch.url,
    dataDir,
    async liveKey() {
      const out = await pollUntil(
        async () => a.output() + b.output(),
        (o) => o.includes('live key:'),
        20_000,
        50,
      );
      return /live key:\s+(\S+)/.exec(out)![1];
    },
    async close() {
      upstream.releaseHeld();
      for (const g of [a, b]) if (g.proc.exitCode === null && g.proc.signalCode === null) await g.stop();
      await upstream.close();
      models.remove();
      await scratch.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
