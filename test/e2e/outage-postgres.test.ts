/**
 * PostgreSQL goes away for 10 s (a TCP proxy this test owns is cut; the machine's server is never
 * touched) while requests keep coming: requests that need it answer 503 service_unavailable with
 * Retry-After (never 500), /healthz says the database is down, nothing crashes, the worker backs
 * off and resumes (a job queued before the cut completes after it), and no money is lost.
 * What must happen within the database deadline is checked on a second instance (same database,
 * same proxy) that keeps time on a fake clock: its answer comes when that clock passes the
 * deadline, and not before. Runs in the DATABASE_URL pass only.
 */
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { proxiedDatabaseUrl, type TcpProxy } from '../support/tcp-proxy';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';
import { fakeClock, type FakeClock } from '../support/fake-clock';
import { DATABASE_ANSWER_DEADLINE_MS } from '../../src/domain/shared/deadline';
import { FAKE_CHAT_REPLY, FAKE_USAGE, startFakeOpenAIUpstream, type FakeOpenAIMode, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { writeModelsFile } from '../support/models-file';
import { readdirSync, readFileSync } from 'node:fs';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { join } from 'node:path';

const withPostgres = process.env.DATABASE_URL ? describe : describe.skip;

withPostgres('PostgreSQL outage', () => {
  let proxy: TcpProxy;
  let proxiedUrl: string;
  let scratch: { url: string; drop: () => Promise<void> };
  let upstream: FakeOpenAIUpstream;
  let models: ReturnType<typeof writeModelsFile>;
  /** The instance on the fake clock (no worker: nothing of it runs unless the test steps it). */
  let stepped: TestGateway;
  let clock: FakeClock;
  const rejections: unknown[] = [];
  const onRejection = (r: unknown) => rejections.push(r);

  beforeAll(async () => {
    process.on('unhandledRejection', onRejection);
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_pgcut');
    const via = await proxiedDatabaseUrl(scratch.url);
    proxy = via.proxy;
    proxiedUrl = via.url;
    // svc-chat-held streams from a fake upstream that waits for the test between its first delta and the rest.
    upstream = await startFakeOpenAIUpstream();
    const held = { provider: 'openai-compatible' as const, upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 30 };
    models = writeModelsFile({}, [{ id: 'svc-chat-held', group: 'chat' as const, ownedBy: 'svc', creditsPer10kTokens: 1, route: held }]);
  });
  // Registered before the gateway's fixture: the handler is removed, and the stepped instance
  // closed, before the gateway closes.
  afterAll(async () => {
    process.off('unhandledRejection', onRejection);
    await stepped?.close();
  });
  const gw = useTestGateway(() => ({ DATABASE_URL: proxiedUrl, SIMULATOR_VIDEO_SECONDS: '3', MODELS_FILE: models.path }));
  beforeAll(async () => {
    clock = fakeClock();
    stepped = await startTestGateway({ DATABASE_URL: proxiedUrl, MODELS_FILE: models.path, WORKER_CONCURRENCY: '0' }, { clock });
  });

  afterAll(async () => {
    await upstream?.close();
    models?.remove();
    await proxy?.close();
    await scratch?.drop();
  });

  /**
   * `requests`, each answered once the stepped instance's clock passes the database deadline its
   * request waits on, and not before: steps the clock to just before it, then through it, once
   * `waiting` such deadlines are armed (one per request that waits on the database).
   */
  async function answeredAtTheDeadline<T>(requests: Array<Promise<T>>, waiting = requests.length, deadlineMs = DATABASE_ANSWER_DEADLINE_MS): Promise<T[]> {
    let answered = 0;
    const all = Promise.all(requests.map((r) => r.finally(() => answered++)));
    await pollUntil(
      async () => clock.armed().filter((t) => !t.repeats && t.delayMs === deadlineMs).length,
      (n) => n >= waiting,
      10_000,
      10,
    );
    await clock.tickAsync(deadlineMs - 1);
    expect(answered).toBe(0);
    await clock.tickAsync(1);
    return all;
  }

  test('cut under load: 503 with Retry-After, never 500; work resumes; no money lost', async () => {
    const acct = await gw.newAccount(100);
    const { secret } = await gw.newKey(acct);
    const queued = await gw.api('POST', '/v1/video/queue', {
      token: secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'through the outage', resolution: '480p' },
    });
    expect(queued.status).toBe(200);

    // Calls keep coming, one after another's answer, each tagged with the phase it was sent in.
    type Phase = 'before' | 'cut' | 'restored';
    let phase = 'before' as Phase;
    const statuses: Array<{ phase: Phase; status: number; type?: string; retryAfter: string | null }> = [];
    const chat = async () => {
      const sentIn = phase;
      const res = await gw.api('POST', '/v1/chat/completions', {
        token: secret,
        body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
      });
      statuses.push({ phase: sentIn, status: res.status, type: res.body?.error?.type, retryAfter: res.headers.get('retry-after') });
      return statuses;
    };
    const answered = (p: Phase, status?: number) => statuses.filter((s) => s.phase === p && (status === undefined || s.status === status)).length;
    await pollUntil(chat, () => answered('before', 200) >= 2, 15_000, 250);

    // The driver's complaints about dropped connections go to the JSON log, not to the console.
    const consoleWrites = [vi.spyOn(console, 'warn'), vi.spyOn(console, 'error'), vi.spyOn(console, 'log')];
    phase = 'cut';
    await proxy.cut();
    const health = await pollUntil(
      () => gw.api('GET', '/healthz'),
      (r) => r.status === 503,
      15_000,
      200,
    );
    expect(health.body).toMatchObject({ status: 'unavailable', database: 'down' });
    const [ready, live] = await Promise.all([gw.api('GET', '/readyz'), gw.api('GET', '/livez')]);
    expect([ready.status, ready.body]).toEqual([503, expect.objectContaining({ status: 'unavailable', database: 'down' })]);
    expect([live.status, live.body]).toEqual([200, { status: 'ok' }]);
    // Through the cut: more than ten calls answered while the database is away.
    await pollUntil(chat, () => answered('cut') > 10, 30_000, 250);
    phase = 'restored';
    await proxy.restore();

    const back = await pollUntil(
      () => gw.api('GET', '/healthz'),
      (r) => r.status === 200,
      15_000,
      200,
    );
    expect(back.body).toMatchObject({ status: 'ok', database: 'up' });
    expect((await gw.api('GET', '/readyz')).body).toMatchObject({ status: 'ready', database: 'up' });
    await pollUntil(chat, () => answered('restored', 200) >= 2, 15_000, 250);

    expect(statuses.filter((s) => s.status >= 500 && s.status !== 503)).toEqual([]);
    for (const s of statuses.filter((x) => x.status === 503)) {
      expect(s).toMatchObject({ type: 'service_unavailable', retryAfter: expect.stringMatching(/^[1-9]\d*$/) });
    }
    expect(answered('cut', 503)).toBeGreaterThan(5);

    // The worker backed off during the cut and resumed: the job ends.
    const done = await pollUntil(
      () => gw.api('POST', '/v1/video/retrieve', { token: secret, body: { id: queued.body.id } }),
      (r) => r.body.status !== 'PROCESSING',
      20_000,
    );
    expect(done.body.status).toBe('COMPLETED');
    expect(rejections).toEqual([]);
    for (const spy of consoleWrites) {
      expect(spy.mock.calls.map((c) => String(c[0]))).toEqual([]);
      spy.mockRestore();
    }
    await expectLedgerInvariants(gw.gateway.database.db);
    const chats = statuses.filter((s) => s.status === 200).length;
    expect(chats).toBeGreaterThan(3);
  }, 60_000);
  test('stalled: /healthz answers 200 degraded with the database "slow" (not "up"), and "up" again after', async () => {
    expect((await gw.api('GET', '/healthz')).body).toMatchObject({ status: 'ok', database: 'up' });
    proxy.stall();
    try {
      // The probe after the shared probe's 250 ms waits out its 3 s timeout; meanwhile checks are
      // answered from the last probe (at most 2 s old), then by the slow one. Never a 503.
      const during = await pollUntil(
        () => gw.api('GET', '/healthz'),
        (r) => r.status !== 200 || r.body?.database !== 'up',
        10_000,
        100,
      );
      expect(during.status).toBe(200);
      expect(during.body).toMatchObject({ status: 'degraded', database: 'slow' });
    } finally {
      proxy.resume();
    }
    const back = await pollUntil(
      () => gw.api('GET', '/healthz'),
      (r) => r.body?.database === 'up',
      15_000,
      200,
    );
    expect(back.body).toMatchObject({ status: 'ok', database: 'up' });
  });

  test('stalled: a key this instance has not seen yet is a 503 with Retry-After at the database deadline, not a request held for the whole stall', async () => {
    const acct = await stepped.newAccount(10);
    const { secret } = await stepped.newKey(acct);
    proxy.stall();
    try {
      const [res] = await answeredAtTheDeadline([
        stepped.api('POST', '/v1/chat/completions', {
          token: secret,
          body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
        }),
      ]);
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ type: 'service_unavailable', code: 'database_unavailable' });
      expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    } finally {
      proxy.resume();
    }
    const back = await pollUntil(
      () =>
        stepped.api('POST', '/v1/chat/completions', {
          token: secret,
          body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
        }),
      (r) => r.status === 200,
      15_000,
      200,
    );
    expect(back.status).toBe(200);
  }, 40_000);

  // On the WebSocket door the same refusal must not be a 4403, which tells a client its
  // credential was refused (the console signs out on it).
  test('stalled: a WebSocket connect whose credential cannot be checked is closed 1013 (try again later), not 4403; it connects once the database is back', async () => {
    const acct = await gw.newAccount(10);
    const { secret } = await gw.newKey(acct);
    const connectOnce = () =>
      new Promise<{ code: number; reason: string } | 'connected'>((resolve) => {
        const client = createClient({
          url: gw.url.replace(/^http/, 'ws') + '/graphql',
          webSocketImpl: WebSocket,
          retryAttempts: 0,
          lazy: false,
          connectionParams: { authorization: `Bearer ${secret}` },
          on: {
            connected: () => {
              resolve('connected');
              void client.dispose();
            },
            closed: (e) => resolve(e as { code: number; reason: string }),
          },
          onNonLazyError: () => undefined,
        });
      });
    proxy.stall();
    let refused;
    try {
      refused = await connectOnce();
    } finally {
      proxy.resume();
    }
    expect(refused).toMatchObject({ code: 1013, reason: expect.stringMatching(/^Try again later: /) });
    expect(await pollUntil(connectOnce, (r) => r === 'connected', 15_000, 200)).toBe('connected');
  }, 40_000);

  test("stalled: a known key's call that needs a new credit lease is a 503 at the database deadline; the lease taken when the database wakes is used, then returned", async () => {
    const acct = await stepped.newAccount(10);
    const key = await stepped.newKey(acct);
    const chat = () =>
      stepped.api('POST', '/v1/chat/completions', {
        token: key.secret,
        body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
      });
    // The key's record is cached; its lease goes back, so its next call must take one.
    expect((await chat()).status).toBe(200);
    const book = stepped.gateway.services.leaseBook;
    await book.returnIdleNow();
    const db = stepped.gateway.database.db;
    const openLeases = async () =>
      Number((await db.one<{ n: string }>(`select count(*) as n from credit_leases where api_key_id = ? and closed_at is null`, [key.id]))!.n);
    expect(await openLeases()).toBe(0);
    proxy.stall();
    try {
      // One take, two callers: each waits for it up to the deadline.
      const [first, second] = await answeredAtTheDeadline([chat(), chat()]);
      for (const res of [first, second]) {
        expect(res.status).toBe(503);
        expect(res.body.error).toMatchObject({ type: 'service_unavailable', code: 'database_unavailable' });
        expect(res.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
      }
    } finally {
      proxy.resume();
    }
    // The take went on and landed: one lease, this instance's, which the next calls use.
    expect(await pollUntil(openLeases, (n) => n === 1, 15_000, 100)).toBe(1);
    const back = await pollUntil(chat, (r) => r.status === 200, 15_000, 200);
    expect(back.status).toBe(200);
    expect(await openLeases()).toBe(1);
    await book.returnIdleNow();
    expect(await openLeases()).toBe(0);
    await expectLedgerInvariants(db);
  }, 60_000);

  /** A live key's streamed call to svc-chat-held, read until its first delta; `rest()` reads it to its end. */
  async function heldStream(secret: string, on: TestGateway = gw) {
    const res = await fetch(`${on.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'svc-chat-held',
        messages: [{ role: 'user', content: 'through the fault' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readSome = async () => {
      const { value, done } = await reader.read();
      if (!done) text += decoder.decode(value, { stream: true });
      return done;
    };
    await readSome();
    return {
      async rest() {
        while (!(await readSome()));
        const events = text
          .split('\n\n')
          .filter((e) => e.startsWith('data: '))
          .map((e) => e.slice(6));
        return { last: events.at(-1), chunks: events.slice(0, -1).map((e) => JSON.parse(e)) };
      },
    };
  }

  /**
   * `call`, held by the upstream in `mode` until the test has seen its `seen`-th request with
   * `content` and cut the database: the answer given while the database is away.
   */
  async function answeredWhileCut<T>(mode: FakeOpenAIMode, call: () => Promise<T>, content: string, seen: number): Promise<T> {
    upstream.setMode(mode);
    try {
      const pending = call();
      await pollUntil(
        async () => upstream.requests.filter((r) => r.json?.messages?.[0]?.content === content).length,
        (n) => n === seen,
        10_000,
        20,
      );
      await proxy.cut();
      upstream.releaseHeld();
      return await pending;
    } finally {
      upstream.setMode('ok');
      await proxy.restore();
    }
  }

  const chargeRows = async (id: string) =>
    Number((await gw.gateway.database.db.one<{ n: string }>(`select count(*) as n from lease_charges where request_id = ?`, [id]))!.n);

  test('stalled (no answer, no error): a stream ends with [DONE] at the charge deadline, and is charged once the database answers', async () => {
    const acct = await stepped.newAccount(10);
    const { secret } = await stepped.newKey(acct);
    upstream.setMode('held-stream');
    const stream = await heldStream(secret, stepped);
    proxy.stall();
    let ended: { last?: string; chunks: any[] };
    try {
      upstream.releaseHeld();
      // Not held for as long as the stall lasts: the batcher gives a silent database CHARGE_DEADLINE_MS (5 s).
      [ended] = await answeredAtTheDeadline([stream.rest()], 1, 5_000);
    } finally {
      upstream.setMode('ok');
      proxy.resume();
    }
    expect(ended.last).toBe('[DONE]');
    expect(ended.chunks.filter((c) => c.error)).toEqual([]);
    const id: string = ended.chunks[0].id;
    // The journal is replayed every 2 s of the instance's clock: stepped until the charge is recorded.
    expect(
      await pollUntil(
        async () => (await clock.tickAsync(2_000), chargeRows(id)),
        (n) => n === 1,
        20_000,
        200,
      ),
    ).toBe(1);
    const cost = (FAKE_USAGE.prompt_tokens + FAKE_USAGE.completion_tokens) / 10_000;
    expect(
      await pollUntil(
        () => stepped.balance(acct),
        (b) => Math.abs(b - (10 - cost)) < 1e-9,
        20_000,
        200,
      ),
    ).toBeCloseTo(10 - cost, 9);
    await expectLedgerInvariants(gw.gateway.database.db);
  }, 60_000);

  test('a stream answered while the database is cut is charged once it is back (kept in the journal meanwhile)', async () => {
    const acct = await gw.newAccount(10);
    const { secret } = await gw.newKey(acct);
    upstream.setMode('held-stream');
    const stream = await heldStream(secret); // the first delta: the call holds its credits, from a lease taken before the cut
    await proxy.cut();
    upstream.releaseHeld();
    const { last, chunks } = await stream.rest();
    upstream.setMode('ok');

    // The client got the whole answer and its end, not an error event.
    expect(last).toBe('[DONE]');
    expect(chunks.filter((c) => c.error)).toEqual([]);
    expect(chunks.map((c) => c.choices?.[0]?.delta?.content ?? '').join('')).toBe(FAKE_CHAT_REPLY);
    const id: string = chunks[0].id;

    // While the database was away the charge waited on disk, flushed, under DATA_DIR.
    const journalDir = join(gw.gateway.config.dataDir, 'charge-journal');
    const kept = readdirSync(journalDir)
      .map((f) => readFileSync(join(journalDir, f), 'utf8'))
      .join('');
    expect(kept).toContain(id);
    await proxy.restore();

    // Back: recorded once (its lease may have been closed meanwhile: then from the balance directly).
    const db = gw.gateway.database.db;
    expect(
      await pollUntil(
        () => chargeRows(id),
        (n) => n === 1,
        20_000,
        200,
      ),
    ).toBe(1);
    const cost = (FAKE_USAGE.prompt_tokens + FAKE_USAGE.completion_tokens) / 10_000;
    expect(
      await pollUntil(
        () => gw.balance(acct),
        (b) => Math.abs(b - (10 - cost)) < 1e-9,
        20_000,
        200,
      ),
    ).toBeCloseTo(10 - cost, 9);
    expect(readdirSync(journalDir)).toEqual([]);
    await expectLedgerInvariants(db);
  }, 60_000);

  test('a plain call answered by its provider while the database is cut is a 200, charged once the database is back', async () => {
    const acct = await gw.newAccount(10);
    const { secret } = await gw.newKey(acct);
    const call = () => gw.api('POST', '/v1/chat/completions', { token: secret, body: { model: 'svc-chat-held', messages: [{ role: 'user', content: 'hi' }] } });
    expect((await call()).status).toBe(200); // the key's credit lease is taken
    await proxy.cut();
    let answered;
    try {
      answered = await call();
    } finally {
      await proxy.restore();
    }
    // Its lease had the credits; the charge waits in the journal. A call of that key needing a
    // new lease during the cut would be a 503 (the first test).
    expect(answered.status).toBe(200);
    const cost = (FAKE_USAGE.prompt_tokens + FAKE_USAGE.completion_tokens) / 10_000;
    expect(Number(answered.headers.get('x-svc-credits'))).toBeCloseTo(cost, 9);
    expect(
      await pollUntil(
        () => chargeRows(answered.body.id),
        (n) => n === 1,
        20_000,
        200,
      ),
    ).toBe(1);
    expect(
      await pollUntil(
        () => gw.balance(acct),
        (b) => Math.abs(b - (10 - 2 * cost)) < 1e-9,
        20_000,
        200,
      ),
    ).toBeCloseTo(10 - 2 * cost, 9);
    await expectLedgerInvariants(gw.gateway.database.db);
  }, 60_000);

  test('an Idempotency-Key whose answer the database could not store is replayed once it is back, not held "running" for 15 minutes', async () => {
    const acct = await gw.newAccount(10);
    const { secret } = await gw.newKey(acct);
    const body = { model: 'svc-chat-held', messages: [{ role: 'user', content: 'once only' }] };
    const call = (key: string) => gw.api('POST', '/v1/chat/completions', { token: secret, body, headers: { 'Idempotency-Key': key } });
    expect((await call('warm-up')).status).toBe(200); // the key's credit lease is taken
    // The key is claimed while the database answers; the provider answers once it is cut.
    const first = await answeredWhileCut('held-json', () => call('cut-mid-call'), 'once only', 2);
    expect(first.status).toBe(200);
    // Once the database is back the stored answer lands: the retry gets it, nothing runs again.
    const retry = await pollUntil(
      () => call('cut-mid-call'),
      (r) => r.status !== 409,
      15_000,
      250,
    );
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.id).toBe(first.body.id);
    expect(upstream.requests.filter((r) => r.json?.messages?.[0]?.content === 'once only')).toHaveLength(2);
    const cost = (FAKE_USAGE.prompt_tokens + FAKE_USAGE.completion_tokens) / 10_000;
    expect(
      await pollUntil(
        () => gw.balance(acct),
        (b) => Math.abs(b - (10 - 2 * cost)) < 1e-9,
        20_000,
        200,
      ),
    ).toBeCloseTo(10 - 2 * cost, 9);
    expect(gw.gateway.services.idempotency.unwrittenCount).toBe(0);
    await expectLedgerInvariants(gw.gateway.database.db);
  }, 60_000);
  test('stalled: an Idempotency-Key claim is a 503 at the database deadline; the claim that lands when the database wakes is freed, so the retry runs once', async () => {
    const acct = await stepped.newAccount(10);
    const { secret } = await stepped.newKey(acct);
    const body = { model: 'svc-chat-1', messages: [{ role: 'user', content: 'claimed in a stall' }], max_tokens: 5 };
    const call = (key: string) => stepped.api('POST', '/v1/chat/completions', { token: secret, body, headers: { 'Idempotency-Key': key } });
    const warm = await call('warm-up');
    expect(warm.status).toBe(200); // the key's record cached, its credit lease taken
    proxy.stall();
    try {
      const [res] = await answeredAtTheDeadline([call('stalled-claim')]);
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ type: 'service_unavailable', code: 'database_unavailable' });
    } finally {
      proxy.resume();
    }
    // Not a 409 "in use" held by a claim nobody answers: the retry runs, is charged once, and replays after.
    const retry = await pollUntil(
      () => call('stalled-claim'),
      (r) => r.status !== 409 && r.status !== 503,
      15_000,
      250,
    );
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    const again = await call('stalled-claim');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(retry.body.id);
    // Two calls charged, the 503 nothing.
    const charged = [warm, retry].map((r) => Number(r.headers.get('x-svc-credits')));
    expect(charged.every((c) => c > 0)).toBe(true);
    expect(await stepped.balance(acct)).toBeCloseTo(10 - charged[0] - charged[1], 9);
    await expectLedgerInvariants(gw.gateway.database.db);
  }, 60_000);
  test('a call answered while the database is cut and charged beyond its lease: x-svc-credits is what its lease held, what moved once it is back; the rest uncollected', async () => {
    // 2 credits: a lease takes at most a quarter of the balance, so the call's 1.61 credits run past it.
    const acct = await gw.newAccount(2);
    const { secret } = await gw.newKey(acct);
    const call = (content: string) =>
      gw.api('POST', '/v1/chat/completions', { token: secret, body: { model: 'svc-chat-held', messages: [{ role: 'user', content }] } });
    const warm = await call('warm-up');
    expect(warm.status).toBe(200); // the key's credit lease is taken
    const answered = await answeredWhileCut('held-huge-json', () => call('far above its hold'), 'far above its hold', 1);
    expect(answered.status).toBe(200);
    expect(answered.body.usage.total_tokens).toBe(16_100); // 1.61 credits of usage
    const reported = Number(answered.headers.get('x-svc-credits'));
    expect(reported).toBeGreaterThan(0);
    expect(reported).toBeLessThan(1.61);
    expect(
      await pollUntil(
        () => chargeRows(answered.body.id),
        (n) => n === 1,
        20_000,
        200,
      ),
    ).toBe(1);
    const charged = Number(warm.headers.get('x-svc-credits')) + reported;
    expect(
      await pollUntil(
        () => gw.balance(acct),
        (b) => Math.abs(b - (2 - charged)) < 1e-9,
        10_000,
        200,
      ),
    ).toBeCloseTo(2 - charged, 9);
    const waived = await gw.gateway.database.db.one<{ amount_micro: string; reason: string }>(
      `select amount_micro, reason from uncollected_charges where request_id = ?`,
      [answered.body.id],
    );
    expect(waived).toMatchObject({ reason: 'database_unavailable' });
    expect(Number(waived!.amount_micro)).toBe(Math.round((1.61 - reported) * 1e6));
    await expectLedgerInvariants(gw.gateway.database.db);
  }, 60_000);
  test('stalled: an image answered by URL is a 503 within seconds, nothing charged; an Idempotency-Key answer is sent without waiting for the stall', async () => {
    const acct = await gw.newAccount(10);
    const { secret } = await gw.newKey(acct);
    const image = (response_format: string) =>
      gw.api('POST', '/v1/images/generations', { token: secret, body: { model: 'svc-creative-v8', prompt: 'a lighthouse', size: '64x64', response_format } });
    const warm = await image('b64_json');
    expect(warm.status).toBe(200); // the key's record cached, its credit lease taken
    const chat = (key: string) =>
      gw.api('POST', '/v1/chat/completions', {
        token: secret,
        body: { model: 'svc-chat-held', messages: [{ role: 'user', content: 'kept answer' }] },
        headers: { 'Idempotency-Key': key },
      });
    upstream.setMode('held-json');
    let byUrl;
    let kept;
    try {
      // Claimed while the database answers; the provider answers once it is stalled.
      const pending = chat('answer-in-a-stall');
      await pollUntil(
        async () => upstream.requests.filter((r) => r.json?.messages?.[0]?.content === 'kept answer').length,
        (n) => n === 1,
        10_000,
        20,
      );
      proxy.stall();
      upstream.releaseHeld();
      // Both answered while the stall goes on (it ends only after them).
      [byUrl, kept] = await Promise.all([image('url'), pending]);
    } finally {
      upstream.setMode('ok');
      proxy.resume();
    }
    expect(byUrl.status).toBe(503);
    expect(byUrl.body.error).toMatchObject({ type: 'service_unavailable', code: 'database_unavailable' });
    // The charge waits out its deadline (then the journal), the stored answer its own: not the stall.
    expect(kept.status).toBe(200);
    const retry = await pollUntil(
      () => chat('answer-in-a-stall'),
      (r) => r.headers.get('idempotent-replayed') === 'true',
      15_000,
      250,
    );
    expect(retry.body.id).toBe(kept.body.id);
    expect(
      await pollUntil(
        () => chargeRows(kept.body.id),
        (n) => n === 1,
        20_000,
        200,
      ),
    ).toBe(1);
    const charged = Number(warm.headers.get('x-svc-credits')) + Number(kept.headers.get('x-svc-credits'));
    expect(
      await pollUntil(
        () => gw.balance(acct),
        (b) => Math.abs(b - (10 - charged)) < 1e-9,
        10_000,
        200,
      ),
    ).toBeCloseTo(10 - charged, 9);
    await expectLedgerInvariants(gw.gateway.database.db);
  }, 60_000);
});
