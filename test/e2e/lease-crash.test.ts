/**
 * SIGKILL one of two instances under billed load, then restart it. Two gateway processes share
 * PostgreSQL and Redis; clients call both. After the lease grace the surviving instance has
 * closed the dead one's leases (returning what their recorded charges did not use), and:
 * every 2xx answer is charged exactly once, at its x-svc-credits; the only other charges are
 * calls the dead instance had committed but could not answer (at most the calls cut by the
 * kill); balances equal their ledgers. Runs in CI's PostgreSQL + Redis pass.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { freePort } from '../support/free-port';
import { pollUntil } from '../support/poll';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { openDatabase } from '../../src/infra/db/orm';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;
vi.setConfig({ testTimeout: 180_000 });

shared('an instance killed under load', () => {
  let a: ChildGateway | undefined;
  let b: ChildGateway | undefined;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>>;
  let dataDir: string;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_leasecrash');
    dataDir = mkdtempSync(join(tmpdir(), 'gw-leasecrash-'));
    env = {
      DATABASE_URL: scratch.url,
      REDIS_URL: process.env.REDIS_URL,
      DATA_DIR: dataDir,
      WORKER_CONCURRENCY: '0',
      LEASE_GRACE_SECONDS: '2',
      LEASE_IDLE_SECONDS: '0.5',
      LOG_LEVEL: 'info',
    };
    a = await startChildGateway(env, await freePort());
    b = await startChildGateway(env, await freePort());
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('after the grace every lease is closed and every answer charged once', async () => {
    const out = await pollUntil(
      async () => a!.output() + b!.output(),
      (o) => o.includes('live key:'),
      20_000,
      50,
    );
    const liveKey = /live key:\s+(\S+)/.exec(out)![1];
    const answered = new Map<string, number>();
    let cutByKill = 0;
    let running = true;
    /** Answers (of any status) the survivor gave after the kill. */
    let killed = false;
    let answeredAfterKill = 0;
    const body = JSON.stringify({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hello' }], max_tokens: 16 });
    const client = async (i: number) => {
      for (let n = 0; running; n++) {
        const target = (i + n) % 2 === 0 ? a! : b!;
        try {
          const res = await fetch(`${target.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
            body,
          });
          const json = (await res.json()) as { id?: string };
          if (res.status === 200) answered.set(json.id!, Math.round(Number(res.headers.get('x-svc-credits')) * 1e6));
          if (killed) answeredAfterKill++;
        } catch (err) {
          // Refused connections never reached the dead instance; anything else was cut mid-call.
          const code = (err as { cause?: { code?: string } }).cause?.code;
          if (code !== 'ECONNREFUSED') cutByKill++;
        }
      }
    };
    const clients = Array.from({ length: 16 }, (_, i) => client(i));
    // Under load (each client takes turns between the two): more than fifty calls answered when one is killed...
    await pollUntil(
      async () => answered.size,
      (n) => n > 50,
      30_000,
      20,
    );
    await b!.kill();
    killed = true;
    // ...and the calls go on against the survivor for a round of every client.
    await pollUntil(
      async () => answeredAfterKill,
      (n) => n >= 16,
      30_000,
      20,
    );
    running = false;
    await Promise.all(clients);
    expect(answered.size).toBeGreaterThan(50);

    const { db, close } = await openDatabase({ databaseUrl: scratch.url, dataDir });
    try {
      // The survivor closes the dead instance's leases once they are 2 s stale, and its own when idle.
      const open = await pollUntil(
        () => db.one<{ n: string }>(`select count(*) as n from credit_leases where closed_at is null`),
        (r) => Number(r!.n) === 0,
        20_000,
        200,
      );
      expect(Number(open!.n)).toBe(0);
      b = await startChildGateway(env, Number(new URL(b!.url).port));
      const charges = new Map(
        (await db.all<{ request_id: string; amount_micro: string }>(`select request_id, amount_micro from lease_charges`)).map((r) => [
          r.request_id,
          Number(r.amount_micro),
        ]),
      );
      for (const [id, credits] of answered) expect([id, charges.get(id)]).toEqual([id, credits]);
      const extra = [...charges.keys()].filter((id) => !answered.has(id));
      expect(extra.length).toBeLessThanOrEqual(cutByKill);
      await expectLedgerInvariants(db);
    } finally {
      await close();
    }
  });
});
