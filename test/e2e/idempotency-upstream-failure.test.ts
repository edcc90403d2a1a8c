/**
 * A first attempt that failed with a 5xx (the upstream broke; nothing was charged) does not pin
 * its Idempotency-Key: the retry runs the request again and is charged once; a further retry
 * with the same key then replays that success.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { useTestGateway } from '../support/use-test-gateway';

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
  /** The request sent raw, given up by the client after `ms`; answers once the gateway has seen it end. */
  const leaveAfter = (secret: string, key: string, ms: number) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ms),
    }).then(
      () => 'answered',
      () => 'gave up',
    );
  /** Retries until the key is no longer in use by the first attempt (what an SDK's 409 retries do), 5 s at most. */
  async function retry(secret: string, key: string) {
    for (let i = 0; ; i++) {
      const res = await gw.api('POST', '/v1/chat/completions', { token: secret, headers: { 'Idempotency-Key': key }, body });
      if (res.status !== 409 || res.body.error?.code !== 'idempotency_key_in_use' || i === 25) return res;
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  test('one that leaves while the upstream is working: the aborted call frees the key; the retry runs and is charged once', async () => {
    const acct = await gw.newAccount(100);
    const { secret } = await gw.newKey(acct);
    upstream.setMode('hang');
    expect(await leaveAfter(secret, 'left-mid-call', 300)).toBe('gave up');
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
    // Authentication held as a stalled database holds it, for the first attempt only.
    const keys = gw.gateway.keys;
    const authenticate = keys.authenticate.bind(keys);
    const spy = jest.spyOn(keys, 'authenticate').mockImplementationOnce(async (token: string) => {
      await new Promise((r) => setTimeout(r, 600));
      return authenticate(token);
    });
    try {
      expect(await leaveAfter(secret, 'left-in-auth', 200)).toBe('gave up');
      await new Promise((r) => setTimeout(r, 800));
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
