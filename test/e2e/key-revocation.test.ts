/**
 * Keys authenticate from a cache; a change reaches every instance. Two gateways share one
 * PostgreSQL database and a redis-server of the test's own: a key revoked (or narrowed) on A is
 * refused by B within a second although B had it cached; and while B's change feed is down,
 * B does not trust its cache, so a revocation made meanwhile is still refused at once.
 * Runs in the DATABASE_URL + REDIS_URL pass, when redis-server is installed.
 */
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { hasRedisServer, startOwnRedis, type OwnRedis } from '../support/own-redis';
import type { TestGateway } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL && hasRedisServer() ? describe : describe.skip;

shared('key changes across instances', () => {
  let redis: OwnRedis;
  let scratch: { url: string; drop: () => Promise<void> };

  beforeAll(async () => {
    redis = await startOwnRedis();
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_keys');
  });
  const env = () => ({ DATABASE_URL: scratch.url, REDIS_URL: redis.url, WORKER_CONCURRENCY: '0' });
  const a = useTestGateway(env);
  const b = useTestGateway(env);
  afterAll(async () => {
    redis?.cleanup();
    await scratch?.drop();
  });

  const models = (gw: TestGateway, secret: string) => gw.api('GET', '/v1/models', { token: secret });
  const chat = (gw: TestGateway, secret: string, model = 'svc-chat-1') =>
    gw.api('POST', '/v1/chat/completions', { token: secret, body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 } });

  test('a revocation on A is refused by B within a second, though B had the key cached', async () => {
    const acct = await a.newAccount(10);
    const key = await a.newKey(acct);
    for (let i = 0; i < 3; i++) expect((await models(b, key.secret)).status).toBe(200);
    const revokedAt = Date.now();
    expect((await a.api('DELETE', `/account/api-keys/${key.id}`, { token: acct.idToken })).status).toBeLessThan(300);
    await pollUntil(
      () => models(b, key.secret),
      (r) => r.status === 401,
      1_000,
      10,
    );
    expect(Date.now() - revokedAt).toBeLessThan(1_000);
  });

  test("a revocation on A ends the key's subscriptions on B within 2 seconds (close 4403)", async () => {
    const acct = await a.newAccount(10);
    const key = await a.newKey(acct);
    let closedWith: number | undefined;
    const client = createClient({
      url: b.url.replace('http', 'ws') + '/graphql',
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${key.secret}` },
      on: { closed: (e) => (closedWith ??= (e as { code: number }).code) },
    });
    const ended = new Promise<void>((resolve) =>
      client.subscribe({ query: 'subscription { videoJobsUpdated { id } }' }, { next: () => undefined, error: () => resolve(), complete: () => resolve() }),
    );
    await new Promise((r) => setTimeout(r, 300));
    const revokedAt = Date.now();
    await a.api('DELETE', `/account/api-keys/${key.id}`, { token: acct.idToken });
    await ended;
    expect(Date.now() - revokedAt).toBeLessThan(2_000);
    expect(closedWith).toBe(4403);
    await client.dispose();
  });

  test('narrowed permissions on A apply on B within a second', async () => {
    const acct = await a.newAccount(10);
    const key = await a.newKey(acct);
    expect((await chat(b, key.secret)).status).toBe(200);
    await a.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { blockedModels: ['svc-chat-1'] } });
    const refused = await pollUntil(
      () => chat(b, key.secret),
      (r) => r.status === 403,
      1_000,
      10,
    );
    expect(refused.body.error.type).toBe('model_forbidden');
  });

  test('while the change feed is down, B reads the database: a revocation is refused at once', async () => {
    const acct = await a.newAccount(10);
    const key = await a.newKey(acct);
    for (let i = 0; i < 3; i++) expect((await models(b, key.secret)).status).toBe(200);
    redis.stop();
    try {
      // Give B's subscriber the moment it takes to see its connection close.
      await new Promise((r) => setTimeout(r, 200));
      expect((await a.api('DELETE', `/account/api-keys/${key.id}`, { token: acct.idToken })).status).toBeLessThan(300);
      expect((await models(b, key.secret)).status).toBe(401);
    } finally {
      redis.start();
    }
    // Back up: B caches again, and still refuses the revoked key.
    await pollUntil(
      () => b.api('GET', '/healthz'),
      (r) => r.body.redis === 'up',
      10_000,
      100,
    );
    expect((await models(b, key.secret)).status).toBe(401);
  });
});
