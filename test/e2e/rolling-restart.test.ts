/**
 * The deployment's promise, with the real load balancer config: Caddy (deploy/Caddyfile) in front
 * of two gateway processes sharing PostgreSQL and Redis. Under steady load each instance in turn
 * gets SIGTERM, exits after draining, and is started again: no request fails. Runs in the
 * PostgreSQL + Redis pass when the `caddy` binary is installed; skipped otherwise.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { freePort } from '../support/free-port';
import { pollUntil } from '../support/poll';

const hasCaddy = spawnSync('caddy', ['version']).status === 0;
const shared = process.env.DATABASE_URL && process.env.REDIS_URL && hasCaddy ? describe : describe.skip;
vi.setConfig({ testTimeout: 120_000 });

shared('rolling restart behind Caddy', () => {
  const gateways: Array<{ port: number; child?: ChildGateway }> = [];
  let caddy: ChildProcess | undefined;
  let lb = '';
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  let dataDir: string;
  let env: Record<string, string | undefined>;

  beforeAll(async () => {
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_roll');
    dataDir = mkdtempSync(join(tmpdir(), 'gw-roll-'));
    env = {
      DATABASE_URL: scratch.url,
      REDIS_URL: process.env.REDIS_URL,
      DATA_DIR: dataDir,
      ADMIN_TOKEN: 'rolling-restart-admin-token',
      SHUTDOWN_DRAIN_SECONDS: '5',
      SHUTDOWN_NOTICE_SECONDS: '3',
    };
    for (let i = 0; i < 2; i++) {
      const port = await freePort();
      gateways.push({ port, child: await startChildGateway(env, port) });
    }
    const lbPort = await freePort();
    lb = `http://127.0.0.1:${lbPort}`;
    caddy = spawn('caddy', ['run', '--adapter', 'caddyfile', '--config', join(__dirname, '..', '..', 'deploy', 'Caddyfile')], {
      env: {
        ...process.env,
        LB_PORT: String(lbPort),
        GATEWAY_UPSTREAMS: gateways.map((g) => `127.0.0.1:${g.port}`).join(' '),
        HOME: dataDir,
        XDG_DATA_HOME: dataDir,
        XDG_CONFIG_HOME: dataDir,
      },
      stdio: 'ignore',
    });
    await pollUntil(
      () =>
        fetch(`${lb}/healthz`).then(
          (r) => r.status,
          () => 0,
        ),
      (s) => s === 200,
      20_000,
      100,
    );
  });

  afterAll(async () => {
    caddy?.kill('SIGTERM');
    for (const g of gateways) await g.child?.stop();
    await scratch?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('each instance restarted in turn under load: every request answered', async () => {
    const out = await pollUntil(
      async () => gateways[0].child!.output() + gateways[1].child!.output(),
      (o) => o.includes('live key:'),
      20_000,
      50,
    );
    const liveKey = /live key:\s+(\S+)/.exec(out)![1];
    const failures: string[] = [];
    const t0 = Date.now();
    const events: string[] = [];
    let answered = 0;
    let loading = true;
    const worker = async (i: number) => {
      while (loading) {
        const post = i % 2 === 1;
        const res = await fetch(`${lb}${post ? '/v1/video/quote' : '/v1/models'}`, {
          method: post ? 'POST' : 'GET',
          headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
          body: post ? JSON.stringify({ model: 'svc-2.5-preview-text-to-video', duration: '5s', resolution: '480p' }) : undefined,
        }).then(
          async (r) => (r.status === 200 ? (await r.arrayBuffer(), '200') : `${r.status} ${post ? 'POST' : 'GET'} ${await r.text()}`),
          (e) => `error ${(e as Error).message}`,
        );
        if (res === '200') answered++;
        else failures.push(`${Date.now() - t0} ${res}`);
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(worker));

    /** Until fifty more requests have been answered: the load goes on between the steps. */
    const moreAnswered = () => {
      const from = answered;
      return pollUntil(
        async () => answered,
        (n) => n >= from + 50,
        30_000,
        20,
      );
    };
    /** Whether the instance has answered load requests (through Caddy) since it started: it is in the rotation. */
    const servesLoad = async (child: ChildGateway) =>
      /svc_http_requests_total\{route="\/v1\/[^"]*",status="200"\} [1-9]/.test(await (await fetch(`${child.url}/metrics`)).text());
    for (const g of gateways) {
      await moreAnswered();
      events.push(`${Date.now() - t0} stop ${g.port}`);
      expect(await g.child!.stop()).toBe(0);
      events.push(`${Date.now() - t0} exited ${g.port}`);
      g.child = await startChildGateway(env, g.port);
      events.push(`${Date.now() - t0} started ${g.port}`);
      // Back in Caddy's rotation after its next health check.
      const restarted = g.child;
      await pollUntil(
        () => servesLoad(restarted),
        (serves) => serves,
        30_000,
        100,
      );
      events.push(`${Date.now() - t0} serving ${g.port}`);
    }
    await moreAnswered();
    loading = false;
    await load;
    expect({ failures, events }).toEqual({ failures: [], events });
    expect(answered).toBeGreaterThan(100);
    process.stdout.write(`rolling restart: ${answered} requests answered, ${failures.length} failed\n`);
  });
});
