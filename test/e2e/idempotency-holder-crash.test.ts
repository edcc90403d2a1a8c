/**
 * An instance dies while the first request of an Idempotency-Key runs on it. Two gateway
 * processes share PostgreSQL; A takes a chat call with a key and waits on its upstream. While A
 * lives, B answers the retry 409 `idempotency_key_in_use`, also well past the grace (A's
 * heartbeats keep its claim). Once A is SIGKILLed, its claim goes stale after the grace and B's
 * retry runs the call: an answer within seconds, not after the 15 minutes a claim without a
 * holder waits. A second retry replays B's answer; the money is whole. Runs in CI's PostgreSQL +
 * Redis pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { freePort } from '../support/free-port';
import { pollUntil } from '../support/poll';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { writeModelsFile } from '../support/models-file';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { openDatabase } from '../../src/infra/db/orm';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;
jest.setTimeout(120_000);

const GRACE_SECONDS = 2;

shared('an instance killed while it runs an idempotent request', () => {
  let a: ChildGateway | undefined;
  let b: ChildGateway | undefined;
  let upstream: FakeOpenAIUpstream;
  let models: ReturnType<typeof writeModelsFile>;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let dataDir: string;

  beforeAll(async () => {
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_idemcrash');
    dataDir = mkdtempSync(join(tmpdir(), 'gw-idemcrash-'));
    upstream = await startFakeOpenAIUpstream();
    models = writeModelsFile({ 'svc-chat-1': { provider: 'openai-compatible', upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 60 } });
    const env = { DATABASE_URL: scratch.url, REDIS_URL: process.env.REDIS_URL, DATA_DIR: dataDir, MODELS_FILE: models.path, WORKER_CONCURRENCY: '0', LEASE_GRACE_SECONDS: String(GRACE_SECONDS) };
    a = await startChildGateway(env, await freePort());
    b = await startChildGateway(env, await freePort());
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await upstream?.close();
    models?.remove();
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('409 while the holder lives, past the grace too; run by the other instance soon after the holder dies; replayed after', async () => {
    const out = await pollUntil(async () => a!.output() + b!.output(), (o) => o.includes('live key:'), 20_000, 50);
    const liveKey = /live key:\s+(\S+)/.exec(out)![1]!;
    const body = JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'once only' }], max_tokens: 16 });
    const post = (target: ChildGateway) =>
      fetch(`${target.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json', 'idempotency-key': 'held-by-a' },
        body,
      });

    upstream.setMode('held-json');
    const onA = post(a!).then(
      (res) => res.status,
      () => 'cut' as const,
    );
    await pollUntil(async () => upstream.requests.filter((r) => r.path.endsWith('/chat/completions')).length, (n) => n >= 1, 10_000, 20);

    const busy = await post(b!);
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('idempotency_key_in_use');
    // Twice the grace: A is alive and says so.
    await new Promise((r) => setTimeout(r, 2 * GRACE_SECONDS * 1000));
    const stillBusy = await post(b!);
    expect(stillBusy.status).toBe(409);
    await stillBusy.body?.cancel();

    await a!.kill();
    a = undefined;
    expect(await onA).toBe('cut');
    upstream.setMode('ok');
    upstream.releaseHeld();
    const killedAt = Date.now();
    const ran = await pollUntil(() => post(b!), (res) => res.status !== 409, 20_000, 250);
    const tookOverMs = Date.now() - killedAt;
    expect(ran.status).toBe(200);
    const answer = (await ran.json()) as { id: string; choices: unknown[] };
    expect(answer.choices).toHaveLength(1);
    // The grace and one heartbeat's worth, not 15 minutes.
    expect(tookOverMs).toBeLessThan(GRACE_SECONDS * 1000 + 5_000);

    const replay = await post(b!);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as { id: string }).id).toBe(answer.id);

    const check = await openDatabase({ databaseUrl: scratch.url, dataDir });
    try {
      // The call B answered is charged once.
      const charges = await check.db.all<{ n: string }>(`select count(*) as n from lease_charges where request_id = ?`, [answer.id]);
      expect(Number(charges[0]!.n)).toBe(1);
      await expectLedgerInvariants(check.db);
    } finally {
      await check.close();
    }
  });
});
