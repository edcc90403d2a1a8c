/**
 * A first attempt that failed with a 5xx (the upstream broke; nothing was charged) does not pin
 * its Idempotency-Key: the retry runs the request again and is charged once; a further retry
 * with the same key then replays that success.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage } from 'node:http';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';

let upstream: FakeOpenAIUpstream;
let dir: string;

beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  dir = mkdtempSync(join(tmpdir(), 'gw-idem-'));
  const catalog: CatalogInput = {
    ...BUILTIN_CATALOG,
    models: BUILTIN_CATALOG.models.map((m) =>
      m.id === 'svc-chat-1'
        ? {
            ...m,
            route: {
              provider: 'openai-compatible' as const,
              upstreamModel: 'up-chat',
              baseUrl: upstream.url,
              apiKeyEnv: 'UPSTREAM_IDEM_KEY',
              timeoutSeconds: 2,
            },
            retry: { attempts: 1, budgetSeconds: 30 },
          }
        : m,
    ),
  };
  writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
});
const gw = useTestGateway(() => ({ MODELS_FILE: join(dir, 'models.json'), UPSTREAM_IDEM_KEY: 'sk-upstream' }));

afterAll(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

test('5xx first, then the retry with the same key runs and is charged once; the next retry replays it', async () => {
  const acct = await gw.newAccount(100);
  const { secret } = await gw.newKey(acct);
  const chat = () =>
    gw.api('POST', '/v1/chat/completions', {
      token: secret,
      headers: { 'Idempotency-Key': 'retry-after-502' },
      body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hello' }] },
    });

  upstream.setMode('error-500');
  const failed = await chat();
  expect(failed.status).toBe(502);
  expect(await gw.balance(acct)).toBe(100);

  upstream.setMode('ok');
  const ran = await chat();
  expect(ran.status).toBe(200);
  expect(ran.headers.get('idempotent-replayed')).toBeNull();
  const cost = Number(ran.headers.get('x-svc-credits'));
  expect(cost).toBeGreaterThan(0);

  const replayed = await chat();
  expect(replayed.status).toBe(200);
  expect(replayed.headers.get('idempotent-replayed')).toBe('true');
  expect(replayed.body).toEqual(ran.body);
  expect(upstream.requests.filter((r) => r.path === '/chat/completions' || r.path === '/v1/chat/completions')).toHaveLength(2);
  expect(await gw.balance(acct)).toBeCloseTo(100 - cost, 6);
});

describe('a client that leaves does not pin its Idempotency-Key', () => {
  const body = { model: 'svc-chat-1', messages: [{ role: 'user', content: 'leaving' }] };
  /** The request, given up by the client once `leaving` resolves; answers whether it was answered first. */
  const leaveWhen = async (secret: string, key: string, leaving: Promise<unknown>) => {
    const abort = new AbortController();
    const answer = fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify(body),
      signal: abort.signal,
    }).then(
      () => 'answered',
      () => 'gave up',
    );
    await leaving;
    abort.abort();
    return answer;
  };
  /** Retries until the key is no longer in use by the first attempt (what an SDK's 409 retries do). */
  const retry = (secret: string, key: string) =>
    pollUntil(
      () => gw.api('POST', '/v1/chat/completions', { token: secret, headers: { 'Idempotency-Key': key }, body }),
      (res) => res.status !== 409 || res.body.error?.code !== 'idempotency_key_in_use',
      5_000,
      200,
    );

  test('one that leaves while the upstream is working: the aborted call frees the key; the retry runs and is charged once', async () => {
    const acct = await gw.newAccount(100);
    const { secret } = await gw.newKey(acct);
    upstream.setMode('hang');
    const before = upstream.requests.length;
    const upstreamHasIt = pollUntil(
      async () => upstream.requests.length,
      (n) => n > before,
      10_000,
      10,
    );
    expect(await leaveWhen(secret, 'left-mid-call', upstreamHasIt)).toBe('gave up');
    upstream.setMode('ok');
    const ran = await retry(secret, 'left-mid-call');
    expect(ran.status).toBe(200);
    expect(ran.headers.get('idempotent-replayed')).toBeNull();
    expect(await gw.balance(acct)).toBeCloseTo(100 - Number(ran.headers.get('x-svc-credits')), 6);
  });

  test('one that leaves while its key is being authenticated: nothing runs for it (no claim on an unread body); the retry runs', async () => {
    const acct = await gw.newAccount(100);
    const { secret } = await gw.newKey(acct);
    upstream.setMode('ok');
    upstream.requests.length = 0;
    // Authentication held as a stalled database holds it, for the first attempt only, until the client has left.
    const keys = gw.gateway.keys;
    const authenticate = keys.authenticate.bind(keys);
    let entered!: () => void;
    const authenticating = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let authenticated!: Promise<unknown>;
    const spy = vi.spyOn(keys, 'authenticate').mockImplementationOnce((token: string) => {
      entered();
      authenticated = released.then(() => authenticate(token));
      return authenticated as ReturnType<typeof authenticate>;
    });
    // The gateway's side of the request: its connection closing is the client gone, as the gateway sees it.
    const server = gw.gateway.server;
    const clientGone = new Promise<void>((resolve) => {
      const onRequest = (req: IncomingMessage) => {
        if (req.headers['idempotency-key'] !== 'left-in-auth') return;
        server.off('request', onRequest);
        req.socket.once('close', () => resolve());
      };
      server.on('request', onRequest);
    });
    try {
      expect(await leaveWhen(secret, 'left-in-auth', authenticating)).toBe('gave up');
      await clientGone;
      // The held authentication ends after the client left; what the gateway does with the request then is done.
      release();
      await authenticated;
      await new Promise((r) => setImmediate(r));
      const ran = await retry(secret, 'left-in-auth');
      expect(ran.status).toBe(200);
      expect(ran.headers.get('idempotent-replayed')).toBeNull();
      expect(upstream.requests.filter((r) => r.json?.messages?.[0]?.content === 'leaving')).toHaveLength(1);
      expect(await gw.balance(acct)).toBeCloseTo(100 - Number(ran.headers.get('x-svc-credits')), 6);
    } finally {
      spy.mockRestore();
    }
  });
});
