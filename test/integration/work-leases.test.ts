/**
 * Work leases outlive the work they guard: a handler slower than the lease keeps its row (the
 * worker renews the lease), so a second instance never runs it at the same time; a stopped
 * worker gives its leases back; and a catalog whose upstream timeout is not shorter than the
 * lease is refused at start-up. The workers run on a fake clock; the leases, on the database's,
 * are brought nearer their end by the test as that clock would.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkItem } from '../../src/domain/work/work-queue';
import { SqlWorkQueue } from '../../src/infra/db/repositories/sql-work-queue';
import { Worker } from '../../src/domain/work/worker';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import { startTestServices, type TestServices } from '../support/test-services';
import { startTestGateway } from '../support/gateway-harness';
import { fakeClock } from '../support/fake-clock';
import { pollUntil } from '../support/poll';

let gw: TestServices;
beforeAll(async () => {
  gw = await startTestServices({ WORKER_CONCURRENCY: '0' });
});
afterAll(() => gw.close());

const quiet = { warn: () => undefined, info: () => undefined };

/** A handler that runs until the test lets it finish; `started` says who began it. */
function heldHandler() {
  const started: string[] = [];
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const run = (name: string) => async () => {
    started.push(name);
    await released;
  };
  return { started, release, run };
}

test('a handler running three times longer than the lease is never run twice, and stop() leaves no lease', async () => {
  const { db } = gw.database;
  // The lease the queue claims and renews for, on the database's clock; the worker renews it every third of it, on the fake clock.
  const LEASE_SECONDS = 30;
  const RENEW_MS = (LEASE_SECONDS * 1000) / 3;
  const queue = new SqlWorkQueue(db, LEASE_SECONDS);
  await db.transaction((tx) => queue.schedule(tx, 'hold_expiry', 'lease-test', {}));
  const held = heldHandler();
  const finished: string[] = [];
  const slow = (name: string) => async (item: WorkItem) => {
    await held.run(name)();
    await queue.done(item);
    finished.push(name);
  };
  // B's claims, counted: it keeps trying for the item while A runs it.
  const bClaims = { n: 0 };
  const bQueue = Object.create(queue) as SqlWorkQueue;
  bQueue.claim = (limit) => (bClaims.n++, queue.claim(limit));
  const clock = fakeClock();
  const opts = { batchSize: 5, maxIdleMs: 1_000, concurrency: 5, leaseSeconds: LEASE_SECONDS, clock };
  const a = new Worker(
    queue,
    { hold_expiry: slow('a'), video_poll: slow('a'), video_cancel: slow('a'), webhook_delivery: slow('a'), key_expiring: slow('a') },
    quiet,
    opts,
  );
  const b = new Worker(
    bQueue,
    { hold_expiry: slow('b'), video_poll: slow('b'), video_cancel: slow('b'), webhook_delivery: slow('b'), key_expiring: slow('b') },
    quiet,
    opts,
  );
  a.start();
  await pollUntil(
    async () => held.started.length,
    (n) => n === 1,
    5_000,
    10,
  );
  b.start();
  const leaseLeftSeconds = async () =>
    Number((await db.one<{ s: string }>(`select extract(epoch from (locked_until - now())) as s from work_items where ref = 'lease-test'`))!.s);
  // Three leases long: each renewal period passes on the database's clock (the lease's end comes
  // that much nearer) and on the workers' (A renews, B tries for the item).
  for (let period = 0; period < 9; period++) {
    await db.run(`update work_items set locked_until = locked_until - make_interval(secs => ?) where ref = 'lease-test'`, [RENEW_MS / 1000]);
    // Both workers are between claims (each has armed its idle wait) before time moves, so B's next try comes within the step.
    await pollUntil(
      async () => clock.armed().filter((t) => !t.repeats && t.delayMs === opts.maxIdleMs).length,
      (n) => n === 2,
      5_000,
      10,
    );
    const claims = bClaims.n;
    await clock.tickAsync(RENEW_MS);
    await pollUntil(leaseLeftSeconds, (s) => s > LEASE_SECONDS - RENEW_MS / 2000, 5_000, 10);
    await pollUntil(
      async () => bClaims.n,
      (n) => n > claims,
      5_000,
      10,
    );
  }
  held.release();
  await pollUntil(
    async () => finished.length,
    (n) => n === 1,
    5_000,
    10,
  );
  await Promise.all([a.stop(), b.stop()]);
  expect(held.started).toEqual(['a']);
  expect(await db.all(`select * from work_items where ref = 'lease-test'`)).toEqual([]);
});

test('a worker stopped before its handler finishes gives the lease back at once', async () => {
  const { db } = gw.database;
  const queue = new SqlWorkQueue(db, 30);
  await db.transaction((tx) => queue.schedule(tx, 'hold_expiry', 'lease-return', {}));
  const held = heldHandler();
  const hang = held.run('w');
  const clock = fakeClock();
  const w = new Worker(queue, { hold_expiry: hang, video_poll: hang, video_cancel: hang, webhook_delivery: hang, key_expiring: hang }, quiet, {
    batchSize: 5,
    maxIdleMs: 50,
    concurrency: 5,
    leaseSeconds: 30,
    clock,
  });
  w.start();
  await pollUntil(
    async () => held.started.length,
    (n) => n === 1,
    5_000,
    10,
  );
  // The stop's deadline (100 ms) passes with the handler still running.
  const stopped = w.stop(100);
  await clock.whenArmed((t) => t.delayMs === 100);
  await clock.tickAsync(100);
  await stopped;
  const row = await db.one<{ locked_until: Date | null }>(`select locked_until from work_items where ref = 'lease-return'`);
  expect(row).toEqual({ locked_until: null });
  held.release();
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
