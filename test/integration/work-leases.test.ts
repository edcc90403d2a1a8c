/**
 * Work leases outlive the work they guard: a handler slower than the lease keeps its row (the
 * worker renews the lease), so a second instance never runs it at the same time; a stopped
 * worker gives its leases back; and a catalog whose upstream timeout is not shorter than the
 * lease is refused at start-up.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkItem } from '../../src/domain/work/work-queue';
import { SqlWorkQueue } from '../../src/infra/db/repositories/sql-work-queue';
import { Worker } from '../../src/domain/work/worker';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { pollUntil } from '../support/poll';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway({ WORKER_CONCURRENCY: '0' });
});
afterAll(() => gw.close());

const quiet = { warn: () => undefined, info: () => undefined };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a handler running three times longer than the lease is never run twice, and stop() leaves no lease', async () => {
  const { db } = gw.gateway.database;
  // The lease the queue claims and renews for (3 s), and the worker renews it every third of it.
  const LEASE_SECONDS = 3;
  const queue = new SqlWorkQueue(db, LEASE_SECONDS);
  await db.transaction((tx) => queue.schedule(tx, 'hold_expiry', 'lease-test', {}));
  const runs: string[] = [];
  const finished: string[] = [];
  const slow = (name: string) => async (item: WorkItem) => {
    runs.push(name);
    await sleep(9_000);
    await queue.done(item);
    finished.push(name);
  };
  // A 3 s lease renewed every second: with a 1 s lease renewed every 333 ms, a renewal 667 ms
  // late on a loaded machine let the second worker take the item over and run it again.
  const opts = { batchSize: 5, maxIdleMs: 50, concurrency: 5, leaseSeconds: LEASE_SECONDS };
  const a = new Worker(queue, { hold_expiry: slow('a'), video_poll: slow('a'), webhook_delivery: slow('a') }, quiet, opts);
  const b = new Worker(queue, { hold_expiry: slow('b'), video_poll: slow('b'), webhook_delivery: slow('b') }, quiet, opts);
  a.start();
  await pollUntil(
    async () => runs.length,
    (n) => n === 1,
    5_000,
    10,
  );
  b.start();
  // Until the first run is over (9 s, three leases), b trying for the item every 50 ms meanwhile.
  await pollUntil(
    async () => finished.length,
    (n) => n === 1,
    30_000,
    50,
  );
  await Promise.all([a.stop(), b.stop()]);
  expect(runs).toEqual(['a']);
  expect(await db.all(`select * from work_items where ref = 'lease-test'`)).toEqual([]);
});

test('a worker stopped before its handler finishes gives the lease back at once', async () => {
  const { db } = gw.gateway.database;
  const queue = new SqlWorkQueue(db, 30);
  await db.transaction((tx) => queue.schedule(tx, 'hold_expiry', 'lease-return', {}));
  let started = false;
  const hang = async () => {
    started = true;
    await sleep(2_000);
  };
  const w = new Worker(queue, { hold_expiry: hang, video_poll: hang, webhook_delivery: hang }, quiet, {
    batchSize: 5,
    maxIdleMs: 50,
    concurrency: 5,
    leaseSeconds: 30,
  });
  w.start();
  await pollUntil(
    async () => started,
    (s) => s,
    5_000,
    10,
  );
  await w.stop(100);
  const row = await db.one<{ locked_until: Date | null }>(`select locked_until from work_items where ref = 'lease-return'`);
  expect(row).toEqual({ locked_until: null });
  await db.run(`delete from work_items where ref = 'lease-return'`);
});

/** A MODELS_FILE (in a directory of its own) whose text-to-video model has a fal route with a 60 s call timeout. */
function videoRouteOf60Seconds(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-lease-'));
  const catalog = {
    ...BUILTIN_CATALOG,
    models: BUILTIN_CATALOG.models.map((m) =>
      m.id === 'svc-2.5-preview-text-to-video'
        ? { ...m, route: { provider: 'fal-queue', upstreamModel: 'x/y', baseUrl: 'https://fal.example', timeoutSeconds: 60 } }
        : m,
    ),
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
  return dir;
}

test('unset, the work lease is derived from the routes: a video route of 60 s starts, and its work rows are leased for 70 s', async () => {
  const dir = videoRouteOf60Seconds();
  const started = await startTestGateway({ MODELS_FILE: join(dir, 'models.json'), WORK_LEASE_SECONDS: undefined });
  try {
    expect((await started.api('GET', '/healthz')).status).toBe(200);
    expect(started.gateway.services.workLeaseSeconds).toBe(70);
  } finally {
    await started.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a video upstream whose call timeout is not shorter than the lease is refused at start-up', async () => {
  const dir = videoRouteOf60Seconds();
  try {
    await expect(startTestGateway({ MODELS_FILE: join(dir, 'models.json'), WORK_LEASE_SECONDS: '30' })).rejects.toThrow(
      /WORK_LEASE_SECONDS \(30\) must be longer than the timeoutSeconds of svc-2.5-preview-text-to-video's route fal-queue-0 \(60\)[^\n]*raise it above 60, or unset it/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
