/**
 * Redis goes away and comes back, on a redis-server this test starts on a port of its own. Two
 * gateways share one PostgreSQL database: A serves the subscriber (no worker), B does the work.
 * - Start with Redis down: both start (degraded) and serve.
 * - Redis stopped for 10 s under load: every request is still answered (rate limits fall back to
 *   per-instance counting, logged and counted in svc_degraded_operations_total), /healthz says
 *   `degraded`, and the job B finishes meanwhile (its event lost for A) reaches A's
 *   videoJobUpdated subscriber after the reconnect, because the subscription re-reads its job.
 * Runs in the DATABASE_URL + REDIS_URL pass, when redis-server is installed.
 */
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { freePort } from '../support/free-port';
import { hasRedisServer, ownRedis, type OwnRedis } from '../support/own-redis';
import type { TestGateway } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { pollUntil } from '../support/poll';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL && hasRedisServer() ? describe : describe.skip;

shared('Redis outage', () => {
  let redis: OwnRedis;
  let scratch: { url: string; drop: () => Promise<void> };

  beforeAll(async () => {
    redis = ownRedis(await freePort());
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_rediscut');
  });
  const env = () => ({ DATABASE_URL: scratch.url, REDIS_URL: redis.url, SIMULATOR_VIDEO_SECONDS: '7' }); // finishes inside the 10 s outage, which starts ~1 s after queueing
  // Redis is not running yet: start-up goes on degraded.
  const a = useTestGateway(() => ({ ...env(), WORKER_CONCURRENCY: '0' }));
  const b = useTestGateway(env);

  afterAll(async () => {
    redis?.cleanup();
    await scratch?.drop();
  });

  test('start degraded; stopped 10 s under load: no failed request, subscription resumes and sees the terminal state', async () => {
    const first = await a.api('GET', '/healthz');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'degraded', redis: 'down', database: 'up' });
    const acct = await a.newAccount(100);
    const { secret } = await a.newKey(acct);
    const chat = (gw: TestGateway) =>
      gw.api('POST', '/v1/chat/completions', { token: secret, body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });
    expect((await chat(a)).status).toBe(200);

    redis.start();
    await pollUntil(
      () => a.api('GET', '/healthz'),
      (r) => r.body.redis === 'up',
      10_000,
      100,
    );
    await pollUntil(
      () => b.api('GET', '/healthz'),
      (r) => r.body.redis === 'up',
      10_000,
      100,
    );

    // The subscriber on A, the job worked on B.
    const ws = createClient({
      url: a.url.replace('http', 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${secret}` },
    });
    const queued = await b.api('POST', '/v1/video/queue', {
      token: secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'outage', resolution: '480p' },
    });
    expect(queued.status).toBe(200);
    const seen: string[] = [];
    const ended = new Promise<void>((resolve, reject) =>
      ws.subscribe(
        { query: `subscription($id: ID!) { videoJobUpdated(id: $id) { id status } }`, variables: { id: queued.body.id } },
        { next: (r: any) => seen.push(r.data?.videoJobUpdated?.status ?? JSON.stringify(r.errors)), error: reject, complete: resolve },
      ),
    );
    await pollUntil(
      async () => seen.length,
      (n) => n >= 1,
      5_000,
      20,
    );
    expect(seen).toEqual(['PROCESSING']);
    // The account-wide subscription on A too: it re-reads what changed while it was cut off.
    const seenByAccount: string[] = [];
    ws.subscribe(
      { query: `subscription { videoJobsUpdated { id status } }` },
      {
        next: (r: any) => r.data?.videoJobsUpdated?.id === queued.body.id && seenByAccount.push(r.data.videoJobsUpdated.status),
        error: () => undefined,
        complete: () => undefined,
      },
    );
    await new Promise((r) => setTimeout(r, 300));

    const statuses: number[] = [];
    let loading = true;
    const load = (async () => {
      for (let i = 0; loading; i++) {
        statuses.push((await chat(i % 2 ? a : b)).status);
        await new Promise((r) => setTimeout(r, 400));
      }
    })();

    redis.stop();
    const stoppedAt = Date.now();
    await pollUntil(
      () => a.api('GET', '/healthz'),
      (r) => r.body.redis === 'down',
      5_000,
      100,
    );
    expect((await a.api('GET', '/healthz')).body).toMatchObject({ status: 'degraded', redis: 'down' });
    // The job finishes on B while Redis is down: A's subscriber cannot hear it yet.
    await pollUntil(
      () => b.api('POST', '/v1/video/retrieve', { token: secret, body: { id: queued.body.id } }),
      (r) => r.body.status !== 'PROCESSING',
      10_000,
    );
    expect(seen).toEqual(['PROCESSING']);
    await new Promise((r) => setTimeout(r, stoppedAt + 10_000 - Date.now()));
    redis.start();

    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      ended,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no terminal state after reconnect: ${seen}`)), 15_000))),
    ]);
    clearTimeout(timer);
    expect(seen).toEqual(['PROCESSING', 'COMPLETED']);
    // Once: the re-read after the reconnect, never repeated.
    await pollUntil(
      async () => seenByAccount.length,
      (n) => n >= 1,
      5_000,
      20,
    );
    await new Promise((r) => setTimeout(r, 500));
    expect(seenByAccount).toEqual(['COMPLETED']);
    loading = false;
    await load;
    await ws.dispose();

    expect(statuses.length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const metrics = await a.api('GET', '/metrics');
    expect(metrics.body).toMatch(/svc_degraded_operations_total\{dependency="redis",operation="rate_limit"\} [1-9]/);
    await expectLedgerInvariants(a.gateway.database.db);
  }, 60_000);
});
