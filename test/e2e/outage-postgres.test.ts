/**
 * PostgreSQL goes away for 10 s (a TCP proxy this test owns is cut; the machine's server is never
 * touched) while requests keep coming: requests that need it answer 503 service_unavailable with
 * Retry-After (never 500), /healthz says the database is down, nothing crashes, the worker backs
 * off and resumes (a job queued before the cut completes after it), and no money is lost.
 * Runs in the DATABASE_URL pass only.
 */
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { pollUntil } from '../support/poll';

const withPostgres = process.env.DATABASE_URL ? describe : describe.skip;

withPostgres('PostgreSQL outage', () => {
  let proxy: TcpProxy;
  let scratch: { url: string; drop: () => Promise<void> };
  let gw: TestGateway;
  const rejections: unknown[] = [];
  const onRejection = (r: unknown) => rejections.push(r);

  beforeAll(async () => {
    process.on('unhandledRejection', onRejection);
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_pgcut');
    const real = new URL(scratch.url);
    proxy = await startTcpProxy(real.hostname, Number(real.port || 5432));
    const viaProxy = new URL(scratch.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String(proxy.port);
    gw = await startTestGateway({ DATABASE_URL: viaProxy.toString(), SIMULATOR_VIDEO_SECONDS: '3' });
  });

  afterAll(async () => {
    process.off('unhandledRejection', onRejection);
    await gw?.close();
    await proxy?.close();
    await scratch?.drop();
  });

  test('cut for 10 s under load: 503 with Retry-After, never 500; work resumes; no money lost', async () => {
    const acct = await gw.newAccount(100);
    const { secret } = await gw.newKey(acct);
    const queued = await gw.api('POST', '/v1/video/queue', { token: secret, body: { model: 'svc-2.5-preview-text-to-video', prompt: 'through the outage', resolution: '480p' } });
    expect(queued.status).toBe(200);

    const statuses: Array<{ at: number; status: number; type?: string; retryAfter: string | null }> = [];
    let loading = true;
    const load = (async () => {
      while (loading) {
        const res = await gw.api('POST', '/v1/chat/completions', { token: secret, body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });
        statuses.push({ at: Date.now(), status: res.status, type: res.body?.error?.type, retryAfter: res.headers.get('retry-after') });
        await new Promise((r) => setTimeout(r, 250));
      }
    })();

    await new Promise((r) => setTimeout(r, 500));
    const cutAt = Date.now();
    await proxy.cut();
    await new Promise((r) => setTimeout(r, 2_000));
    const health = await gw.api('GET', '/healthz');
    expect(health.status).toBe(503);
    expect(health.body).toMatchObject({ status: 'unavailable', database: 'down' });
    await new Promise((r) => setTimeout(r, cutAt + 10_000 - Date.now()));
    await proxy.restore();
    const restoredAt = Date.now();

    const back = await pollUntil(() => gw.api('GET', '/healthz'), (r) => r.status === 200, 15_000, 200);
    expect(back.body).toMatchObject({ status: 'ok', database: 'up' });
    await pollUntil(async () => statuses.filter((s) => s.at > restoredAt && s.status === 200).length, (n) => n >= 2, 15_000, 100);
    loading = false;
    await load;

    const during = statuses.filter((s) => s.at > cutAt + 500 && s.at < restoredAt);
    expect(during.length).toBeGreaterThan(10);
    expect(statuses.filter((s) => s.status >= 500 && s.status !== 503)).toEqual([]);
    for (const s of statuses.filter((x) => x.status === 503)) {
      expect(s).toMatchObject({ type: 'service_unavailable', retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
    }
    expect(during.filter((s) => s.status === 503).length).toBeGreaterThan(5);

    // The worker backed off during the cut and resumed: the job ends.
    const done = await pollUntil(() => gw.api('POST', '/v1/video/retrieve', { token: secret, body: { id: queued.body.id } }), (r) => r.body.status !== 'PROCESSING', 20_000);
    expect(done.body.status).toBe('COMPLETED');
    expect(rejections).toEqual([]);
    await expectLedgerInvariants(gw.gateway.database.db);
    const chats = statuses.filter((s) => s.status === 200).length;
    expect(chats).toBeGreaterThan(3);
  }, 60_000);
  test('stalled: /healthz answers 200 degraded with the database "slow" (not "up"), and "up" again after', async () => {
    expect((await gw.api('GET', '/healthz')).body).toMatchObject({ status: 'ok', database: 'up' });
    proxy.stall();
    try {
      await new Promise((r) => setTimeout(r, 300)); // past the shared probe's 250 ms
      const during = await gw.api('GET', '/healthz');
      expect(during.status).toBe(200);
      expect(during.body).toMatchObject({ status: 'degraded', database: 'slow' });
    } finally {
      proxy.resume();
    }
    const back = await pollUntil(() => gw.api('GET', '/healthz'), (r) => r.body?.database === 'up', 15_000, 200);
    expect(back.body).toMatchObject({ status: 'ok', database: 'up' });
  });
});
