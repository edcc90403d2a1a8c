import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import type { TestGateway } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';

/**
 * Many graphql-ws sockets on one instance: the per-address connection cap refuses the upgrade
 * past it (HTTP 429 before any handshake) and frees a place when a socket closes; one job event
 * reaches every one of a few hundred subscribers (delivered over several batches).
 */
const TEXT_MODEL = 'svc-2.5-preview-text-to-video';
const wsUrlOf = (gw: TestGateway) => `${gw.url.replace(/^http/, 'ws')}/graphql`;

type Upgrade = { open: WebSocket } | { status: number; headers: Record<string, string | string[] | undefined>; body: string };

/** One raw upgrade: the open socket, or the HTTP answer that refused it. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<Upgrade> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws', { headers });
    ws.once('open', () => resolve({ open: ws }));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    ws.once('error', reject);
  });
}

describe('per-address connection cap', () => {
  const sockets: WebSocket[] = [];
  // Registered before the gateway's fixture, so the sockets end before the gateway closes.
  afterAll(() => sockets.forEach((s) => s.terminate()));
  const gw = useTestGateway({ WS_MAX_CONNECTIONS_PER_ADDRESS: '3' });

  test('past the cap an upgrade is refused with 429 and the error body; after one closes, one more is accepted', async () => {
    const url = wsUrlOf(gw);
    for (let i = 0; i < 3; i++) {
      const up = await upgrade(url);
      expect('open' in up).toBe(true);
      if ('open' in up) sockets.push(up.open);
    }
    const refused = await upgrade(url);
    expect('open' in refused).toBe(false);
    if ('open' in refused) return;
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('5');
    expect(JSON.parse(refused.body)).toEqual({
      error: { type: 'rate_limit_exceeded', code: 'too_many_connections', param: null, message: expect.stringContaining('at most 3') },
    });

    // A graphql-ws client sees the refusal as a failed connection, not a hang.
    const failed = await new Promise<unknown>((resolve) => {
      const client = createClient({
        url,
        webSocketImpl: WebSocket,
        lazy: false,
        retryAttempts: 0,
        onNonLazyError: (err) => {
          resolve(err);
          void client.dispose();
        },
      });
    });
    expect(failed).toBeDefined();

    sockets.shift()!.close();
    // The place is given back when the server sees the TCP socket go: poll for it.
    const again = await pollUntil(
      async () => {
        const up = await upgrade(url);
        if ('open' in up) sockets.push(up.open);
        return up;
      },
      (up) => 'open' in up,
      5000,
      50,
    );
    expect('open' in again).toBe(true);
    expect((await upgrade(url)) as { status: number }).toMatchObject({ status: 429 });
    // The peer is no trusted proxy here: X-Forwarded-For is not believed.
    expect((await upgrade(url, { 'x-forwarded-for': '198.51.100.1' })) as { status: number }).toMatchObject({ status: 429 });
  });
});

describe('behind a trusted proxy', () => {
  const sockets: WebSocket[] = [];
  afterAll(() => sockets.forEach((s) => s.terminate()));
  const gw = useTestGateway({ WS_MAX_CONNECTIONS_PER_ADDRESS: '2', TRUSTED_PROXIES: '127.0.0.0/8' });

  test('each client named by X-Forwarded-For has its own count', async () => {
    const url = wsUrlOf(gw);
    const open = async (client: string) => {
      const up = await upgrade(url, { 'x-forwarded-for': client });
      if ('open' in up) sockets.push(up.open);
      return 'open' in up ? 'open' : up.status;
    };
    expect([await open('198.51.100.1'), await open('198.51.100.1'), await open('198.51.100.1')]).toEqual(['open', 'open', 429]);
    // Another client behind the same proxy, and a client's own spoofed entry to the left of it.
    expect([await open('198.51.100.2'), await open('198.51.100.9, 198.51.100.2'), await open('198.51.100.2')]).toEqual(['open', 'open', 429]);
    // IPv6 clients count per /64.
    expect([await open('2001:db8:1:2::a'), await open('2001:db8:1:2::b'), await open('2001:db8:1:2:ffff::1'), await open('2001:db8:1:3::a')]).toEqual([
      'open',
      'open',
      429,
      'open',
    ]);
  });
});

describe('one event, a few hundred subscribers', () => {
  const clients: Client[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.dispose()));
  });
  const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '1' });

  test("a job's completion reaches every subscriber of its account (more than one batch), once each, and no other account's", async () => {
    const SUBSCRIBERS = 450;
    const acct = await gw.newAccount(1000);
    const live = await gw.newKey(acct);
    const other = await gw.newKey(await gw.newAccount(0));
    const url = wsUrlOf(gw);
    const connectOne = (token: string) =>
      new Promise<Client>((resolve, reject) => {
        const client = createClient({
          url,
          webSocketImpl: WebSocket,
          lazy: false,
          retryAttempts: 0,
          connectionParams: { authorization: `Bearer ${token}` },
          on: { connected: () => resolve(client) },
          onNonLazyError: reject,
        });
        clients.push(client);
      });
    const mine = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => connectOne(live.secret)));
    const outsider = await connectOne(other.secret);

    const completedAt = new Array<number>(SUBSCRIBERS).fill(0);
    let outsiderEvents = 0;
    let errors = 0;
    const query = 'subscription { videoJobsUpdated { id status } }';
    mine.forEach((client, i) =>
      client.subscribe<{ videoJobsUpdated: { id: string; status: string } }>(
        { query },
        {
          next: (r) => {
            if (r.data?.videoJobsUpdated.status === 'COMPLETED') completedAt[i]++;
            if (r.errors) errors++;
          },
          error: () => errors++,
          complete: () => undefined,
        },
      ),
    );
    outsider.subscribe({ query }, { next: () => outsiderEvents++, error: () => errors++, complete: () => undefined });
    // Every subscription is on the bus before the job is queued.
    const bus = gw.gateway.services.events as unknown as { listeners: number };
    await pollUntil(
      async () => bus.listeners,
      (n) => n >= SUBSCRIBERS + 1,
      10_000,
      20,
    );
    expect(bus.listeners).toBe(SUBSCRIBERS + 1);
    // 450 subscribes sent in one tick are more than a turn's share (64): every socket stopped
    // reading and came back in slices (graphql/burst-reads.ts), and none of them was lost.
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(Number(/^svc_ws_read_pauses_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);

    const res = await gw.api('POST', '/v1/video/queue', {
      token: (await gw.newKey(acct, { mode: 'test' })).secret,
      body: { model: TEXT_MODEL, prompt: 'fan-out', resolution: '480p' },
    });
    expect(res.status).toBe(200);
    await pollUntil(
      async () => completedAt.filter((n) => n > 0).length,
      (n) => n === SUBSCRIBERS,
      20_000,
      50,
    );
    expect(completedAt.every((n) => n === 1)).toBe(true);
    expect(errors).toBe(0);
    expect(outsiderEvents).toBe(0);
  });
});
