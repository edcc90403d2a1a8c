/**
 * Keys authenticate from a cache; a change reaches every instance. Two gateways share one
 * PostgreSQL database and a redis-server of the test's own: a key revoked (or narrowed) on A is
 * refused by B as soon as B's change feed brings the news, although B had it cached; and while B's change feed is down,
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
  /** Resolves once `gw`'s key-change feed has brought the news of `keyId` (its cache and directory have heard it first). */
  const heardOf = (gw: TestGateway, keyId: string) =>
    new Promise<void>((resolve) => {
      const off = gw.gateway.services.keyChanges.subscribe((id) => {
        if (id !== keyId) return;
        off();
        resolve();
      });
    });
  const chat = (gw: TestGateway, secret: string, model = 'svc-chat-1') =>
    gw.api('POST', '/v1/chat/completions', { token: secret, body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 } });

  test("a revocation on A is refused by B once B's feed brings it, though B had the key cached", async () => {
    const acct = await a.newAccount(10);
    const key = await a.newKey(acct);
    for (let i = 0; i < 3; i++) expect((await models(b, key.secret)).status).toBe(200);
    const heard = heardOf(b, key.id);
    expect((await a.api('DELETE', `/account/api-keys/${key.id}`, { token: acct.idToken })).status).toBeLessThan(300);
    await heard;
    expect((await models(b, key.secret)).status).toBe(401);
  });

  test("a revocation on A ends the key's subscriptions on B (close 4403)", async () => {
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
    let live!: () => void;
    const subscribed = new Promise<void>((r) => (live = r));
    const ended = new Promise<void>((resolve) =>
      client.subscribe({ query: 'subscription { videoJobsUpdated { id } }' }, { next: () => live(), error: () => resolve(), complete: () => resolve() }),
    );
    // The subscription runs on B: it hears the account's video job queued there.
    const queued = await b.api('POST', '/v1/video/queue', {
      token: key.secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'heard', resolution: '480p' },
    });
    expect(queued.status).toBe(200);
    await subscribed;
    await a.api('DELETE', `/account/api-keys/${key.id}`, { token: acct.idToken });
    await ended;
    expect(closedWith).toBe(4403);
    await client.dispose();
  });

  test("narrowed permissions on A apply on B once B's feed brings them", async () => {
    const acct = await a.newAccount(10);
    const key = await a.newKey(acct);
    expect((await chat(b, key.secret)).status).toBe(200);
    const heard = heardOf(b, key.id);
    await a.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { blockedModels: ['svc-chat-1'] } });
    await heard;
    const refused = await chat(b, key.secret);
    expect(refused.status).toBe(403);
    expect(refused.body.error.type).toBe('model_forbidden');
  });

  test('while the change feed is down, B reads the database: a revocation is refused at once', async () => {
    const acct = await a.newAccount(10);
    const key = await a.newKey(acct);
    for (let i = 0; i < 3; i++) expect((await models(b, key.secret)).status).toBe(200);
    redis.stop();
    try {
      // Until B's subscriber has seen its connection close.
      await pollUntil(
        async () => b.gateway.services.keyChanges.live,
        (live) => !live,
        10_000,
        10,
      );
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
