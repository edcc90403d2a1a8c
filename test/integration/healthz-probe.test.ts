/**
 * /healthz's database probe has a connection of its own on PostgreSQL. A balancer asks /healthz
 * whether PostgreSQL answers, not how long this instance's statement queue is: with every
 * connection of the shared pool busy for seconds, /healthz still says `up` (a probe queued
 * behind the pool would pass its 3 s timeout and say `slow`). And the
 * probe's own connection still tells a stalled server (`slow`) and a gone one (`down`), and comes
 * back `up` on a fresh connection after either. Runs in the DATABASE_URL pass only.
 */
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { DatabaseHealth } from '../../src/infra/db/db-unavailable';
import { PgProbe } from '../../src/infra/db/pg-probe';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { pollUntil } from '../support/poll';
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

  test('every pooled connection busy for 6 s: /healthz keeps answering "up"', async () => {
    expect((await gw.api('GET', '/healthz')).body).toMatchObject({ database: 'up' });
    // Twice the pool's ten connections, each held 3 s: the pool is queued for about 6 s.
    let busyOver = false;
    const busy = Promise.all(Array.from({ length: 20 }, () => gw.gateway.database.db.all('select pg_sleep(3)'))).finally(() => (busyOver = true));
    // Asked all through, until the pool's statements are over.
    const checks: string[] = [];
    await pollUntil(
      async () => {
        const over = busyOver;
        if (!over) checks.push((await gw.api('GET', '/healthz')).body.database);
        return over;
      },
      (over) => over,
      30_000,
      100,
    );
    await busy;
    expect(checks.length).toBeGreaterThanOrEqual(4);
    expect(checks.filter((database) => database !== 'up')).toEqual([]);
  }, 40_000);

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
        // Answered at its timeout, the stall still going on.
        expect(await probe.probe(500)).toBe('slow');
        // The connection stuck in the stall was dropped: the next probe opens another, which the stall holds too.
        expect(await probe.probe(500)).toBe('slow');
        expect(health.isUp).toBe(true);
      } finally {
        proxy.resume();
      }
      expect(await probe.probe(2_000)).toBe('up');
      // The stalled connections' late ends change nothing: once they are over, only the probe's own is open.
      await pollUntil(
        async () => proxy.open,
        (n) => n <= 1,
        10_000,
        20,
      );
      expect(health.isUp).toBe(true);
    });

    test('cut: "down" and the database reported down; "up" and reported up after the restore', async () => {
      expect(await probe.probe(1_000)).toBe('up');
      await proxy.cut();
      // The cut drops the probe's open connection; once the probe has seen it go, its check finds no server.
      await pollUntil(
        () => probe.probe(1_000),
        (state) => state === 'down',
        10_000,
        50,
      );
      expect(health.isUp).toBe(false);
      await proxy.restore();
      expect(await probe.probe(2_000)).toBe('up');
      expect(health.isUp).toBe(true);
    });
  });
});
