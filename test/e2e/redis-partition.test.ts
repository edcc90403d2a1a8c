/**
 * Redis partitioned rather than gone: the socket stays open and nothing comes back (a TCP proxy
 * the test owns, in front of the machine's Redis, holds every byte). Two gateways share one
 * PostgreSQL database and that Redis.
 * - A request that publishes an event after its charge (queueing a video) answers within its
 *   command deadline instead of for the whole partition, and so does revoking a key.
 * - /healthz asks Redis (a PING) instead of reading the socket's state: `redis: down`.
 * - The other instance's key feed sees the partition (its subscriber's PINGs go unanswered), so
 *   its cache stops vouching for keys: the key revoked on A is refused on B within seconds.
 * Runs in the DATABASE_URL + REDIS_URL pass.
 */
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import type { TestGateway } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { pollUntil } from '../support/poll';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;

shared('Redis partition', () => {
  let proxy: TcpProxy;
  let scratch: { url: string; drop: () => Promise<void> };

  beforeAll(async () => {
    const target = new URL(process.env.REDIS_URL!);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 6379));
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_redispart');
  });
  // Registered before the gateways' fixtures, so Redis answers again while they close.
  afterAll(() => proxy?.resume());
  const redisUrl = () => `redis://127.0.0.1:${proxy.port}`;
  const a = useTestGateway(() => ({ DATABASE_URL: scratch.url, REDIS_URL: redisUrl() }));
  const b = useTestGateway(() => ({ DATABASE_URL: scratch.url, REDIS_URL: redisUrl(), WORKER_CONCURRENCY: '0' }));

  afterAll(async () => {
    await proxy?.close();
    await scratch?.drop();
  });

  test('requests answer, /healthz says so, and a key revoked on one instance is refused on the other', async () => {
    const acct = await a.newAccount(100);
    const live = await a.newKey(acct);
    const test = await a.newKey(acct, { mode: 'test' });
    const chat = (gw: TestGateway) =>
      gw.api('POST', '/v1/chat/completions', { token: live.secret, body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });
    // B has the key in its cache, and both have heard from Redis.
    expect((await chat(b)).status).toBe(200);
    for (const gw of [a, b]) expect((await gw.api('GET', '/healthz')).body.redis).toBe('up');

    proxy.stall();
    // Answered while the partition goes on (it ends only once the test has its answers): not held for it.
    const queued = await a.api('POST', '/v1/video/queue', {
      token: test.secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'partition', resolution: '480p' },
    });
    expect(queued.status).toBe(200);

    const health = await pollUntil(
      () => a.api('GET', '/healthz'),
      (r) => r.body.redis === 'down',
      6_000,
      100,
    );
    expect(health.body).toMatchObject({ status: 'degraded', redis: 'down', database: 'up' });

    expect((await a.api('DELETE', `/account/api-keys/${live.id}`, { token: acct.idToken })).status).toBeLessThan(300);
    // The revocation's news is lost in the partition; B's cache must stop vouching for the key by itself.
    const refused = await pollUntil(
      () => chat(b),
      (r) => r.status === 401,
      8_000,
      200,
    );
    expect(refused.status).toBe(401);

    proxy.resume();
    await pollUntil(
      () => b.api('GET', '/healthz'),
      (r) => r.body.redis === 'up',
      10_000,
      100,
    );
    expect((await chat(a)).status).toBe(401);
    await expectLedgerInvariants(a.gateway.database.db);
  }, 60_000);
});
