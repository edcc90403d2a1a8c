import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { pollUntil } from '../support/poll';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { openDatabase } from '../../src/infra/db/orm';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { freePort } from '../support/free-port';

vi.setConfig({ testTimeout: 180_000 });

async function call(url: string, path: string, token: string, body?: unknown) {
  const res = await fetch(url + path, {
    method: body === undefined ? 'GET' : path.includes('webhook') ? 'PATCH' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

test('SIGKILL with jobs PROCESSING and webhooks due: after restart every job ends, refunds happen once, webhooks arrive', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-crash-'));
  const scratch = process.env.DATABASE_URL ? await createScratchDatabase(process.env.DATABASE_URL, 'gw_crash') : undefined;
  const databaseUrl = scratch?.url;
  const receiver = await startWebhookReceiver();
  const port = await freePort();
  const env = {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL,
    SIMULATOR_VIDEO_SECONDS: '2',
    WEBHOOK_ALLOW_LOCAL: '1',
    WEBHOOK_RETRY_DELAYS: '1,1',
    WORK_LEASE_SECONDS: '2',
    // Every call made under a lease must be shorter than the lease (checked at start-up).
    WEBHOOK_TIMEOUT_SECONDS: '1',
    ADMIN_TOKEN: 'crash-test-admin-token-0123',
  };
  let gw: ChildGateway | undefined = await startChildGateway(env, port);
  try {
    // /healthz answers as soon as the server listens; the demo credentials are printed just after.
    const out = await pollUntil(
      async () => gw!.output(),
      (o) => o.includes('test key:'),
      20_000,
      50,
    );
    const idToken = /ID token:\s+(\S+)/.exec(out)![1];
    const liveKey = /live key:\s+(\S+)/.exec(out)![1];
    const keyId = /^(svc_live_[A-Za-z0-9]+)_/.exec(liveKey)![1];
    const hook = await call(gw.url, `/account/api-keys/${keyId}/webhook`, idToken, { url: receiver.url });
    expect(hook.status).toBe(200);
    receiver.verifyWith([hook.body.secret]);

    // Wave 1 finishes while the receiver is down: its webhooks are due for retry at the crash.
    receiver.failNextRequests(1000);
    const wave1: string[] = [];
    for (const prompt of ['one', 'two [fail]', 'three']) {
      const r = await call(gw.url, '/v1/video/queue', liveKey, { model: 'svc-2.5-preview-text-to-video', prompt, resolution: '480p' });
      expect(r.status).toBe(200);
      wave1.push(r.body.id);
    }
    await pollUntil(
      async () => receiver.received.length,
      (n) => n >= 3,
      20_000,
    );
    // Wave 2 is PROCESSING at the crash. (5 video requests per minute per key: use the test key too.)
    const testKey = /test key:\s+(\S+)/.exec(out)![1];
    const wave2: string[] = [];
    for (const [key, prompt] of [
      [liveKey, 'four [fail]'],
      [liveKey, 'five'],
      [testKey, 'six [fail]'],
      [testKey, 'seven'],
    ]) {
      const r = await call(gw.url, '/v1/video/queue', key, { model: 'svc-2.5-preview-text-to-video', prompt, resolution: '480p' });
      expect(r.status).toBe(200);
      wave2.push(r.body.id);
    }
    await gw.kill();
    gw = undefined;

    receiver.failNextRequests(0);
    gw = await startChildGateway(env, port);
    const all = [...wave1, ...wave2];
    const final = await pollUntil(
      () => Promise.all(all.map((id) => call(gw!.url, '/v1/video/retrieve', liveKey, { id }).then((r) => r.body))),
      (jobs) => jobs.every((j) => j.status !== 'PROCESSING'),
      60_000,
      250,
    );
    expect(final.map((j) => j.status)).toEqual(['COMPLETED', 'FAILED', 'COMPLETED', 'FAILED', 'COMPLETED', 'FAILED', 'COMPLETED']);
    // Every live job's webhook reaches the receiver with a 2xx in the end (test-key jobs have no webhook).
    const delivered = () => new Set(receiver.received.filter((e) => e.verifiedWith).map((e) => e.body.data.id));
    await pollUntil(
      async () => delivered(),
      (d) => [...wave1, wave2[0], wave2[1]].every((id) => d.has(id)),
      30_000,
      250,
    );
    // Balance: 1000 minus the two completed live jobs of wave 1 and the one of wave 2 (10 credits each).
    const account = await call(gw.url, '/account', idToken);
    expect(account.body.balance).toBe(1000 - 3 * 10);
    expect(await gw.stop()).toBe(0);
    gw = undefined;

    const handle = await openDatabase({ databaseUrl, dataDir });
    try {
      const refunds = await handle.db.all<{ reference: string; n: string }>(
        `select reference, count(*) as n from ledger_entries where kind = 'refund' group by reference order by reference`,
      );
      expect(refunds.map((r) => [r.reference, Number(r.n)]).sort()).toEqual(
        [
          [wave1[1], 1],
          [wave2[0], 1],
        ].sort(),
      );
      await expectLedgerInvariants(handle.db);
      const left = await handle.db.all(`select kind, ref from work_items where kind <> 'hold_expiry'`);
      expect(left).toEqual([]);
    } finally {
      await handle.close();
    }
  } finally {
    await gw?.kill();
    await receiver.close();
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
