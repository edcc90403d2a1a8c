/**
 * Graceful shutdown (what SIGTERM runs: main.ts calls gateway.close()). With a short drain: a
 * request in flight finishes and is charged once; /healthz answers 503 with Connection: close on
 * a connection a balancer already holds; new connections are refused; a request still running
 * at the deadline sees the shutdown signal and is cut; afterwards no hold and no work lease is
 * left open.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { Client } from 'undici';
import { makePng } from '../support/fake-openai-upstream';
import { useTestGateway } from '../support/use-test-gateway';
import { startTestGateway } from '../support/gateway-harness';
import { fakeClock } from '../support/fake-clock';
import { openDatabase } from '../../src/infra/db/orm';
import { expectLedgerInvariants } from '../support/ledger-invariants';

// The test stops the gateway itself, so the fixture cannot read its database afterwards: the test
// checks the ledger invariants on that database, reopened after the stop.
const gw = useTestGateway({ SHUTDOWN_DRAIN_SECONDS: '2', SIMULATOR_VIDEO_SECONDS: '60' }, { ledgerInvariants: false });

/** A multipart image edit whose body is sent in two halves: the second only on `finish()`. */
function slowEdit(secret: string) {
  const boundary = 'slow-boundary-1234';
  const png = makePng(64, 64);
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="prompt"\r\n\r\nadd a hat\r\n`),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="in.png"\r\nContent-Type: image/png\r\n\r\n`),
    png,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const req = httpRequest(`${gw.url}/v1/images/edits`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': body.length },
  });
  const response = new Promise<{ status: number; text: string } | { error: string }>((resolve) => {
    req.on('response', (res: IncomingMessage) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
      res.on('error', (e) => resolve({ error: e.message }));
    });
    req.on('error', (e) => resolve({ error: e.message }));
  });
  req.write(body.subarray(0, 100));
  return { finish: () => req.end(body.subarray(100)), response };
}

test('drain: in-flight finishes, /healthz 503, new connections refused, the deadline cuts the rest; no hold or lease left', async () => {
  const acct = await gw.newAccount(100);
  const { secret } = await gw.newKey(acct);
  const video = await gw.api('POST', '/v1/video/queue', {
    token: secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'long', resolution: '480p' },
  });
  expect(video.status).toBe(200);
  const balancer = new Client(gw.url, { pipelining: 1 });
  expect((await balancer.request({ path: '/healthz', method: 'GET' })).statusCode).toBe(200);
  expect((await gw.api('GET', '/readyz')).body).toMatchObject({ status: 'ready', database: 'up' });

  // Both edits in flight: the gateway has their requests (headers and the first part of the body).
  let arrived = 0;
  let bothArrived!: () => void;
  const inFlight = new Promise<void>((r) => (bothArrived = r));
  const onRequest = (req: IncomingMessage) => req.url === '/v1/images/edits' && ++arrived === 2 && bothArrived();
  gw.gateway.server.prependListener('request', onRequest);
  const finishing = slowEdit(secret);
  const stuck = slowEdit(secret);
  await inFlight;
  gw.gateway.server.off('request', onRequest);
  // What happens from here, in order.
  const order: string[] = [];
  gw.gateway.shutdown.deadline.addEventListener('abort', () => order.push('deadline'));
  void stuck.response.then(() => order.push('stuck cut'));
  const closed = gw.gateway.close().then(() => order.push('closed'));
  expect(gw.gateway.shutdown.draining.aborted).toBe(true);

  const health = await balancer.request({ path: '/healthz', method: 'GET' });
  expect(health.statusCode).toBe(503);
  expect(health.headers.connection).toBe('close');
  await health.body.text();
  // A new connection is refused (a balancer retries it on another instance).
  const fresh = new Client(gw.url);
  await expect(fresh.request({ path: '/healthz', method: 'GET' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  await fresh.close().catch(() => undefined);

  finishing.finish();
  const done = await finishing.response;
  order.push('finished');
  expect(done).toMatchObject({ status: 200 });
  expect(JSON.parse((done as { text: string }).text).data).toHaveLength(1);

  await closed;
  expect(await stuck.response).toMatchObject({ error: expect.any(String) });
  // The request that finished did so before the drain deadline; the one still running at it was cut after it, as the close ended.
  expect(order.slice(0, 2)).toEqual(['finished', 'deadline']);
  expect(order.slice(2).sort()).toEqual(['closed', 'stuck cut']);
  await balancer.close().catch(() => undefined);

  // After the stop: reopen the database the gateway used.
  const { config } = gw.gateway;
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    expect(await db.db.all(`select ref from work_items where kind = 'hold_expiry'`)).toEqual([]);
    expect(await db.db.all(`select kind, ref from work_items where locked_until is not null`)).toEqual([]);
    // The video (10) and one edit, charged once; the stuck edit was never charged.
    const balance = await db.db.one<{ b: string }>(`select balance_micro as b from accounts where id = ?`, [acct.id]);
    // Image calls are paid from credit leases: one recorded charge, and no lease left open.
    const editCost = await db.db.all(`select amount_micro from lease_charges where account_id = ?`, [acct.id]);
    expect(editCost).toHaveLength(1);
    expect(await db.db.all(`select id from credit_leases where closed_at is null`)).toEqual([]);
    expect(Number(balance!.b)).toBeLessThan(90_000_000);
    await expectLedgerInvariants(db.db);
  } finally {
    await db.close();
  }
});

test('the shutdown notice: /readyz says draining (no more traffic) and /livez ok (no restart) until the notice is over, then the drain', async () => {
  const clock = fakeClock();
  const noticed = await startTestGateway({ SHUTDOWN_NOTICE_SECONDS: '30', SHUTDOWN_DRAIN_SECONDS: '1' }, { clock });
  expect((await noticed.api('GET', '/readyz')).body).toMatchObject({ status: 'ready', database: 'up' });
  let closed = false;
  const closing = noticed.gateway.close().then(() => (closed = true));
  await clock.whenArmed((t) => t.delayMs === 30_000);
  const [ready, live, health] = await Promise.all(['/readyz', '/livez', '/healthz'].map((path) => noticed.api('GET', path)));
  expect([ready.status, ready.body]).toEqual([503, { status: 'draining' }]);
  expect([live.status, live.body]).toEqual([200, { status: 'ok' }]);
  expect(health.status).toBe(503);
  await clock.tickAsync(29_000);
  expect([(await noticed.api('GET', '/readyz')).status, closed]).toEqual([503, false]);
  await clock.tickAsync(1_000);
  await closing;
  await expect(fetch(`${noticed.url}/livez`)).rejects.toThrow();
  await noticed.close();
});
