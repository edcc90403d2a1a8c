/**
 * /healthz's database probe has a connection of its own on PostgreSQL. A balancer asks /healthz
 * whether PostgreSQL answers, not how long this instance's statement queue is: with every
 * connection of the shared pool busy for seconds, /healthz still says `up`, quickly. And the
 * probe's own connection still tells a stalled server (`slow`) and a gone one (`down`), and comes
 * back `up` on a fresh connection after either. Runs in the DATABASE_URL pass only.
 */
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { DatabaseHealth } from '../../src/infra/db/db-unavailable';
import { PgProbe } from '../../src/infra/db/pg-probe';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { proxiedDatabaseUrl, type TcpProxy } from '../support/tcp-proxy';

const withPostgres = process.env.DATABASE_URL ? describe : describe.skip;

withPostgres('/healthz database probe on PostgreSQL', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startTestGateway();
  });
  afterAll(async () => {
    await gw?.close();
  });

  test('every pooled connection busy for 6 s: /healthz keeps answering "up" within half a second', async () => {
    expect((await gw.api('GET', '/healthz')).body).toMatchObject({ database: 'up' });
    // Twice the pool's ten connections, each held 3 s: the pool is queued for about 6 s.
    const busy = Array.from({ length: 20 }, () => gw.gateway.database.db.all('select pg_sleep(3)'));
    const checks: Array<{ at: number; ms: number; database: string }> = [];
    const until = Date.now() + 4_500;
    while (Date.now() < until) {
      const started = performance.now();
      const res = await gw.api('GET', '/healthz');
      checks.push({ at: started, ms: performance.now() - started, database: res.body.database });
      await new Promise((r) => setTimeout(r, 100));
    }
    await Promise.all(busy);
    // Asked all through the 4.5 s, never more than 1.5 s apart (a check takes at most 0.5 s, below,
    // then 0.1 s of sleep); more than 20 checks was a pace a loaded machine's timers missed.
    const gaps = checks.slice(1).map((c, i) => c.at - checks[i].at);
    expect(checks.length).toBeGreaterThanOrEqual(4);
    expect(Math.max(...gaps)).toBeLessThan(1_500);
    expect(checks.filter((c) => c.database !== 'up')).toEqual([]);
    expect(checks.filter((c) => c.ms > 500)).toEqual([]);
  }, 30_000);

  describe('through a proxy the test owns', () => {
    let scratch: { url: string; drop: () => Promise<void> };
    let proxy: TcpProxy;
    let health: DatabaseHealth;
    let probe: PgProbe;
    beforeAll(async () => {
      scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_probe');
      const via = await proxiedDatabaseUrl(scratch.url);
      proxy = via.proxy;
      health = new DatabaseHealth();
      probe = new PgProbe(via.url, health);
    });
    afterAll(async () => {
      await probe?.close();
      await proxy?.close();
      await scratch?.drop();
    });

    test('stalled: "slow" after the timeout, the database not reported down; "up" once it answers again', async () => {
      expect(await probe.probe(1_000)).toBe('up');
      proxy.stall();
      try {
        const started = Date.now();
        expect(await probe.probe(500)).toBe('slow');
        expect(Date.now() - started).toBeLessThan(2_000);
        // The connection stuck in the stall was dropped: the next probe opens another, which the stall holds too.
        expect(await probe.probe(500)).toBe('slow');
        expect(health.isUp).toBe(true);
      } finally {
        proxy.resume();
      }
      expect(await probe.probe(2_000)).toBe('up');
      // The stalled connections' late ends change nothing.
      await new Promise((r) => setTimeout(r, 200));
      expect(health.isUp).toBe(true);
    });

    test('cut: "down" and the database reported down; "up" and reported up after the restore', async () => {
      expect(await probe.probe(1_000)).toBe('up');
      await proxy.cut();
      // The cut drops the probe's open connection; the check after it finds no server.
      await new Promise((r) => setTimeout(r, 100));
      expect(await probe.probe(1_000)).toBe('down');
      expect(health.isUp).toBe(false);
      await proxy.restore();
      expect(await probe.probe(2_000)).toBe('up');
      expect(health.isUp).toBe(true);
    });
  });
});
