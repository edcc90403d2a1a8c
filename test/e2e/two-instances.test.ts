import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { pollUntil } from '../support/poll';
import { freePort } from '../support/free-port';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';

/**
 * Two gateway processes behind one PostgreSQL and one Redis: a subscriber on instance A sees
 * every change of a job whose work ran on instance B, exactly once each. Needs real servers, so
 * it runs in CI's second pass (DATABASE_URL and REDIS_URL set) and is skipped in the embedded one.
 */
const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;
vi.setConfig({ testTimeout: 120_000 });

shared('two instances sharing PostgreSQL and Redis', () => {
  let a: ChildGateway | undefined;
  let b: ChildGateway | undefined;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  let dataDir: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_two');
    dataDir = mkdtempSync(join(tmpdir(), 'gw-two-'));
    const env = {
      DATABASE_URL: scratch.url,
      REDIS_URL: process.env.REDIS_URL,
      DATA_DIR: dataDir,
      SIMULATOR_VIDEO_SECONDS: '1',
      ADMIN_TOKEN: 'two-instance-admin-token',
      LOG_LEVEL: 'info',
    };
    // A serves requests and subscriptions only; B runs all the work.
    a = await startChildGateway({ ...env, WORKER_CONCURRENCY: '0' }, await freePort());
    b = await startChildGateway(env, await freePort());
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
    await a?.stop();
    await b?.stop();
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('a subscriber on A sees each change of a job worked on B, once', async () => {
    const out = await pollUntil(
      async () => a!.output(),
      (o) => o.includes('test key:'),
      20_000,
      50,
    );
    const liveKey = /live key:\s+(\S+)/.exec(out)![1];
    const client = createClient({
      url: `${a!.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${liveKey}` },
    });
    clients.push(client);

    // Every change of the account's jobs, from before the job exists.
    const accountEvents: any[] = [];
    let ready!: () => void;
    const subscribed = new Promise<void>((r) => (ready = r));
    client.subscribe(
      { query: 'subscription { videoJobsUpdated { id status url } }' },
      { next: (r) => accountEvents.push(r.data?.videoJobsUpdated), error: () => undefined, complete: () => undefined },
    );
    // graphql-ws has no "subscribed" acknowledgement: a round trip on the same socket orders it.
    client.subscribe({ query: '{ models { id } }' }, { next: () => undefined, error: () => undefined, complete: () => ready() });
    await subscribed;

    const queued = await fetch(`${b!.url}/v1/video/queue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.5-preview-text-to-video', prompt: 'two instances', resolution: '480p' }),
    }).then((r) => r.json() as Promise<any>);
    expect(queued.status).toBe('PROCESSING');

    const jobEvents: any[] = [];
    const finished = new Promise<void>((resolve, reject) =>
      client.subscribe(
        { query: 'subscription($id: ID!) { videoJobUpdated(id: $id) { id status url } }', variables: { id: queued.id } },
        { next: (r) => jobEvents.push(r.data?.videoJobUpdated ?? r.errors), error: reject, complete: resolve },
      ),
    );
    await finished;
    expect(jobEvents.map((e) => e.status)).toEqual(['PROCESSING', 'COMPLETED']);
    expect(jobEvents[1].url).toContain('/media/');

    // Another job queued on B after it: B publishes its first event after the first job's, on the
    // same Redis connection, so once A has it a duplicate of the first job's would have arrived too.
    const marker = await fetch(`${b!.url}/v1/video/queue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-2.5-preview-text-to-video', prompt: 'after it', resolution: '480p' }),
    }).then((r) => r.json() as Promise<any>);
    await pollUntil(
      async () => accountEvents.some((e) => e.id === marker.id),
      (seen) => seen,
      10_000,
    );
    expect(accountEvents.filter((e) => e.id === queued.id).map((e) => e.status)).toEqual(['PROCESSING', 'COMPLETED']);
    // The work ran on B (A runs no worker): only B logged the job's end.
    expect(b!.output()).toMatch(new RegExp(`"jobId":"${queued.id}".*video job finished`));
    expect(a!.output()).not.toContain(queued.id);
  });
});
