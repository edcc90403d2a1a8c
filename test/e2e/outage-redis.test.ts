/**
 * Redis goes away and comes back, on a redis-server this test starts on a port of its own. Two
 * gateways share one PostgreSQL database: A serves the subscriber (no worker), B does the work.
 * - Start with Redis down: both start (degraded) and serve.
 * - Redis stopped under load (until the job B works on has finished): every request is still answered (rate limits fall back to
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
  // The job finishes 7 s after it is queued: after the outage has begun (about a second after queueing).
  const env = () => ({ DATABASE_URL: scratch.url, REDIS_URL: redis.url, SIMULATOR_VIDEO_SECONDS: '7' });
  // Redis is not running yet: start-up goes on degraded.
  const a = useTestGateway(() => ({ ...env(), WORKER_CONCURRENCY: '0' }));
  const b = useTestGateway(env);

  afterAll(async () => {
    redis?.cleanup();
    await scratch?.drop();
  });

  test('start degraded; stopped under load: no failed request, subscription resumes and sees the terminal state', async () => {
    const first = await a.api('GET', '/healthz');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ status: 'degraded', redis: 'down', database: 'up' });
    // Serving degraded, but not ready for traffic while Redis is away; alive all the same.
    const [ready, live] = await Promise.all([a.api('GET', '/readyz'), a.api('GET', '/livez')]);
    expect([ready.status, ready.body]).toEqual([503, { status: 'unavailable', redis: 'down', database: 'up' }]);
    expect([live.status, live.body]).toEqual([200, { status: 'ok' }]);
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
    expect((await a.api('GET', '/readyz')).body).toEqual({ status: 'ready', redis: 'up', database: 'up' });

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
    const seenByAccount: Array<{ id: string; status: string }> = [];
    ws.subscribe(
      { query: `subscription { videoJobsUpdated { id status } }` },
      { next: (r: any) => r.data?.videoJobsUpdated && seenByAccount.push(r.data.videoJobsUpdated), error: () => undefined, complete: () => undefined },
    );
    // graphql-ws has no "subscribed" acknowledgement: a round trip on the same socket orders it.
    await new Promise<void>((resolve) => ws.subscribe({ query: '{ models { id } }' }, { next: () => undefined, error: () => undefined, complete: resolve }));
    const ofTheJob = () => seenByAccount.filter((e) => e.id === queued.body.id).map((e) => e.status);

    // Calls keep coming on both instances all along: one with each look at what the test waits for.
    const statuses: number[] = [];
    const withACall =
      <T>(read: () => Promise<T>) =>
      async () => {
        statuses.push((await chat(statuses.length % 2 ? a : b)).status);
        return read();
      };

    redis.stop();
    await pollUntil(
      withACall(() => a.api('GET', '/healthz')),
      (r) => r.body.redis === 'down',
      5_000,
      100,
    );
    expect((await a.api('GET', '/healthz')).body).toMatchObject({ status: 'degraded', redis: 'down' });
    // The job finishes on B while Redis is down: A's subscriber cannot hear it yet. The outage
    // lasts until then, and until a dozen calls have been answered through it.
    await pollUntil(
      withACall(() => b.api('POST', '/v1/video/retrieve', { token: secret, body: { id: queued.body.id } })),
      (r) => r.body.status !== 'PROCESSING' && statuses.length >= 12,
      15_000,
      400,
    );
    expect(seen).toEqual(['PROCESSING']);
    redis.start();

    // After the reconnect: the terminal state, on both subscriptions.
    await pollUntil(
      withACall(async () => [...seen]),
      (statesSeen) => statesSeen.includes('COMPLETED') && ofTheJob().length >= 1,
      15_000,
      400,
    );
    await ended;
    expect(seen).toEqual(['PROCESSING', 'COMPLETED']);
    // Once: the re-read after the reconnect, never repeated. A job queued after it on B marks
    // the moment: its first event comes through Redis after the re-read was done.
    const marker = await b.api('POST', '/v1/video/queue', {
      token: secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'after the outage', resolution: '480p' },
    });
    expect(marker.status).toBe(200);
    await pollUntil(
      async () => seenByAccount.some((e) => e.id === marker.body.id),
      (heard) => heard,
      10_000,
      20,
    );
    expect(ofTheJob()).toEqual(['COMPLETED']);
    await ws.dispose();

    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const metrics = await a.api('GET', '/metrics');
    expect(metrics.body).toMatch(/svc_degraded_operations_total\{dependency="redis",operation="rate_limit"\} [1-9]/);
    await expectLedgerInvariants(a.gateway.database.db);
  }, 60_000);
});
