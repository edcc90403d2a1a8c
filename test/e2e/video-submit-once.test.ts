/**
 * Video work is submitted upstream exactly once. A MODELS_FILE routes the text-to-video model to
 * a fake fal-style queue whose submit answers far slower than the gateway's poll interval: the
 * client still gets PROCESSING at once, the upstream sees one submission, the account one charge.
 * A submission the upstream refuses ends the job FAILED with a refund.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';
import { startFakeFalUpstream, type FakeFalUpstream } from '../support/fake-fal-upstream';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';

const MODEL = 'svc-2.5-preview-text-to-video';
const PRICE = 10; // 5s 480p

let fal: FakeFalUpstream;
let dir: string;

beforeAll(async () => {
  fal = await startFakeFalUpstream();
  dir = mkdtempSync(join(tmpdir(), 'gw-fal-'));
  const catalog: CatalogInput = {
    ...BUILTIN_CATALOG,
    models: BUILTIN_CATALOG.models.map((m) =>
      // One attempt: what one refused or lost submission does (retries and failover: upstream-routes tests).
      m.id === MODEL
        ? {
            ...m,
            route: { provider: 'fal-queue' as const, upstreamModel: 'fal-ai/fake-video', baseUrl: fal.url, timeoutSeconds: 5 },
            retry: { attempts: 1, budgetSeconds: 30 },
          }
        : m,
    ),
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
});
// Polls every 0.2 s; the lease (15 s) outlives the 5 s upstream call and the 10 s webhook timeouts.
const gw = useTestGateway(() => ({ MODELS_FILE: join(dir, 'models.json'), VIDEO_POLL_SECONDS: '0.2', WORK_LEASE_SECONDS: '15' }));

afterAll(async () => {
  await fal.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  fal.requests.length = 0;
});

const submits = () => fal.requests.filter((r) => r.method === 'POST');
const retrieve = (secret: string, id: string) => gw.api('POST', '/v1/video/retrieve', { token: secret, body: { id } });

test('an upstream slower than the poll interval gets one submission, the client PROCESSING at once, one charge', async () => {
  fal.setMode({ submit: 'ok', submitDelayMs: 0, pollsBeforeDone: 10_000 });
  const acct = await gw.newAccount(100);
  const { secret } = await gw.newKey(acct);
  // The upstream holds the submission until the test releases it: the queue call answers
  // meanwhile. (It was timed, under 1 s against a 1.5 s delay, which a loaded machine could miss.)
  const release = fal.holdSubmits();
  let queued;
  try {
    queued = await gw.api('POST', '/v1/video/queue', { token: secret, body: { model: MODEL, prompt: 'a slow upstream', duration: '5s', resolution: '480p' } });
    expect(fal.submitsAnswered()).toBe(0);
    expect(queued.status).toBe(200);
    expect(queued.body).toMatchObject({ id: expect.stringMatching(/^vid_/), status: 'PROCESSING', credits_charged: PRICE });
    // The submission reaches the upstream and is held there for a few poll intervals (0.2 s each),
    // well inside the 5 s upstream timeout: until the job's row has been due that long on the
    // database's clock, by which the poll would have come round several times.
    await pollUntil(
      async () => submits().length,
      (n) => n >= 1,
      10_000,
      20,
    );
    const jobId: string = queued.body.id;
    const dueForSeconds = async () =>
      Number((await gw.gateway.database.db.one<{ s: string }>(`select extract(epoch from (now() - due_at)) as s from work_items where ref = ?`, [jobId]))!.s);
    await pollUntil(dueForSeconds, (s) => s >= 0.6, 10_000, 50);
  } finally {
    release();
  }

  // Wait until the job has been polled a few times after the slow submission came back.
  await pollUntil(
    async () => fal.requests.filter((r) => r.method === 'GET').length,
    (n) => n >= 3,
    10_000,
    50,
  );
  expect(submits()).toHaveLength(1);
  expect(submits()[0].json).toMatchObject({ prompt: 'a slow upstream' });
  const row = await gw.gateway.database.db.one<{ queue_id: string; n: string }>(
    `select queue_id, (select count(*) from video_jobs where account_id = ?) as n from video_jobs where id = ?`,
    [acct.id, queued.body.id],
  );
  expect(row).toEqual({ queue_id: 'req-1', n: expect.anything() });
  expect(Number(row!.n)).toBe(1);
  expect((await retrieve(secret, queued.body.id)).body.status).toBe('PROCESSING');
  expect(await gw.balance(acct)).toBe(100 - PRICE);
  const charges = await gw.gateway.database.db.all(`select kind from ledger_entries where reference = ?`, [queued.body.id]);
  expect(charges).toHaveLength(1);
});

test('a submission the upstream refuses ends the job FAILED and refunds it', async () => {
  fal.setMode({ submit: 'error-500', submitDelayMs: 300 });
  const acct = await gw.newAccount(100);
  const { secret } = await gw.newKey(acct);
  const queued = await gw.api('POST', '/v1/video/queue', { token: secret, body: { model: MODEL, prompt: 'refused', duration: '5s', resolution: '480p' } });
  expect(queued.status).toBe(200);
  expect(queued.body.status).toBe('PROCESSING');
  const done = await pollUntil(
    () => retrieve(secret, queued.body.id),
    (r) => r.body.status !== 'PROCESSING',
    10_000,
  );
  expect(done.body).toEqual({ id: queued.body.id, status: 'FAILED', reason: 'The video provider failed to accept the job.' });
  expect(submits()).toHaveLength(1);
  expect(await gw.balance(acct)).toBe(100);
});

test('a claim that finds a submission started under a lost lease fails and refunds the job instead of submitting again', async () => {
  fal.setMode({ submit: 'ok', submitDelayMs: 3_000, pollsBeforeDone: 10_000 });
  const acct = await gw.newAccount(100);
  const { secret } = await gw.newKey(acct);
  const queued = await gw.api('POST', '/v1/video/queue', { token: secret, body: { model: MODEL, prompt: 'lost lease', duration: '5s', resolution: '480p' } });
  const { db } = gw.gateway.database;
  // The submission is under way; the instance running it is taken for dead (its lease expires).
  await pollUntil(
    async () => submits().length,
    (n) => n === 1,
    5_000,
    20,
  );
  await db.run(`update work_items set locked_until = now() - interval '1 second' where kind = 'video_poll' and ref = ?`, [queued.body.id]);
  const done = await pollUntil(
    () => retrieve(secret, queued.body.id),
    (r) => r.body.status !== 'PROCESSING',
    10_000,
  );
  expect(done.body).toEqual({ id: queued.body.id, status: 'FAILED', reason: 'The video provider did not confirm the submission.' });
  // The first submission's late answer changes nothing, and nothing was submitted twice: once it
  // has come back and the worker is done with what it ran.
  await pollUntil(
    async () => fal.submitsAnswered() >= 1 && gw.gateway.services.worker.busy === 0,
    (done) => done,
    10_000,
    20,
  );
  expect(submits()).toHaveLength(1);
  expect((await retrieve(secret, queued.body.id)).body.status).toBe('FAILED');
  expect(await gw.balance(acct)).toBe(100);
});
