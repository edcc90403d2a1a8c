import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { pollUntil } from '../support/poll';

let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
// Registered before the gateway's fixture, so the receiver closes before the gateway.
afterAll(async () => {
  await receiver.close();
});
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '0.5', WEBHOOK_ALLOW_LOCAL: '1', WEBHOOK_RETRY_DELAYS: '1,2' });
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.failNextRequests(0);
});

async function keyWithWebhook(credits = 100): Promise<{ acct: TestAccount; key: { id: string; secret: string }; webhookSecret: string }> {
  const acct = await gw.newAccount(credits);
  const key = await gw.newKey(acct);
  const res = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url: receiver.url } });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ ok: true, secret: expect.any(String) });
  return { acct, key, webhookSecret: res.body.secret };
}

const queue = (secret: string, prompt = 'a kite') =>
  gw.api('POST', '/v1/video/queue', { token: secret, body: { model: 'svc-2.5-preview-text-to-video', prompt, resolution: '480p' } });

const eventsFor = (jobId: string) => receiver.received.filter((e) => e.body.data?.id === jobId);

/** Until the delivery has nothing left to send (its work row is gone: delivered, given up or its webhook cleared): no attempt of it can come after. */
const deliveryOver = (deliveryId: string) =>
  pollUntil(
    async () =>
      Number(
        (await gw.gateway.database.db.one<{ n: string }>(`select count(*) as n from work_items where kind = 'webhook_delivery' and ref = ?`, [deliveryId]))!.n,
      ),
    (n) => n === 0,
    20_000,
    50,
  );

test('video.completed arrives signed, with SPEC headers and payload; the key record shows the webhook', async () => {
  const { acct, key, webhookSecret } = await keyWithWebhook();
  receiver.verifyWith([webhookSecret]);
  const job = (await queue(key.secret)).body;
  const [event] = await pollUntil(
    async () => eventsFor(job.id),
    (e) => e.length > 0,
  );
  expect(event.verifiedWith).toBe(webhookSecret);
  expect(event.headers).toMatchObject({
    'content-type': 'application/json',
    'user-agent': 'Svc-Webhook/1.0',
    'x-svc-event': 'video.completed',
    'x-svc-delivery-id': expect.any(String),
    'x-svc-delivery-attempt': '1',
  });
  expect(event.headers['x-svc-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  expect(event.body).toEqual({
    id: `wh_${job.id}_completed`,
    event: 'video.completed',
    created: expect.any(Number),
    data: { id: job.id, status: 'COMPLETED', url: expect.stringContaining('/media/'), credits_used: 10 },
  });
  const keys = await gw.api('GET', '/account/api-keys', { token: acct.idToken });
  expect(keys.body.data[0].webhook).toEqual({ url: receiver.url });
  expect(JSON.stringify(keys.body)).not.toContain(webhookSecret);
});

test('video.failed carries the reason; credits were refunded first', async () => {
  const { acct, key, webhookSecret } = await keyWithWebhook(10);
  receiver.verifyWith([webhookSecret]);
  const job = (await queue(key.secret, 'please [fail]')).body;
  const [event] = await pollUntil(
    async () => eventsFor(job.id),
    (e) => e.length > 0,
  );
  expect(event.headers['x-svc-event']).toBe('video.failed');
  expect(event.body).toMatchObject({
    id: `wh_${job.id}_failed`,
    event: 'video.failed',
    data: { id: job.id, status: 'FAILED', reason: expect.any(String), credits_used: 0 },
  });
  expect(await gw.balance(acct)).toBe(10);
});

test('a failing receiver sees attempts 1, 2, 3 with stable ids; the delivery log shows them newest first', async () => {
  const { acct, key, webhookSecret } = await keyWithWebhook();
  receiver.verifyWith([webhookSecret]);
  receiver.failNextRequests(3);
  const job = (await queue(key.secret)).body;
  const events = await pollUntil(
    async () => eventsFor(job.id),
    (e) => e.length >= 3,
    20_000,
  );
  // The third attempt was the last: no fourth can come.
  await deliveryOver(String(events[0].headers['x-svc-delivery-id']));
  expect(eventsFor(job.id)).toHaveLength(3);
  expect(events.map((e) => e.headers['x-svc-delivery-attempt'])).toEqual(['1', '2', '3']);
  expect(new Set(events.map((e) => e.body.id)).size).toBe(1);
  expect(new Set(events.map((e) => e.headers['x-svc-delivery-id'])).size).toBe(1);
  expect(events.every((e) => e.verifiedWith === webhookSecret)).toBe(true);

  const log = await gw.api('GET', `/account/api-keys/${key.id}/webhook/deliveries`, { token: acct.idToken });
  expect(log.status).toBe(200);
  expect(log.body.data.map((d: any) => d.attempt)).toEqual([3, 2, 1]);
  // The retry delays are honoured (WEBHOOK_RETRY_DELAYS=1,2), on the database's clock: an attempt is
  // logged in the transaction that schedules the next, which runs once that is due.
  const [third, second, first] = log.body.data.map((d: any) => d.created as number);
  expect(second - first).toBeGreaterThanOrEqual(1);
  expect(third - second).toBeGreaterThanOrEqual(2);
  expect(log.body.data[0]).toEqual({
    eventId: `wh_${job.id}_completed`,
    eventType: 'video.completed',
    deliveryId: events[0].headers['x-svc-delivery-id'],
    attempt: 3,
    statusCode: 500,
    error: expect.any(String),
    durationMs: expect.any(Number),
    created: expect.any(Number),
  });
  const admin = await gw.api('GET', `/admin/webhook-deliveries?jobId=${job.id}`, { token: ADMIN_TOKEN });
  expect(admin.body.data).toHaveLength(3);
  const stranger = await gw.newAccount();
  expect((await gw.api('GET', `/account/api-keys/${key.id}/webhook/deliveries`, { token: stranger.idToken })).status).toBe(404);
});

test('after regeneration, an in-flight retry keeps the old secret and new events use the new one', async () => {
  const { acct, key, webhookSecret: oldSecret } = await keyWithWebhook();
  receiver.verifyWith([oldSecret]);
  receiver.failNextRequests(1);
  const first = (await queue(key.secret)).body;
  await pollUntil(
    async () => eventsFor(first.id),
    (e) => e.length >= 1,
  );
  const regen = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { regenerateSecret: true } });
  expect(regen.body).toMatchObject({ ok: true, secret: expect.any(String) });
  const newSecret = regen.body.secret as string;
  expect(newSecret).not.toBe(oldSecret);
  receiver.verifyWith([oldSecret, newSecret]);
  const retries = await pollUntil(
    async () => eventsFor(first.id),
    (e) => e.length >= 2,
  );
  expect(retries[1].headers['x-svc-delivery-attempt']).toBe('2');
  expect(retries[1].verifiedWith).toBe(oldSecret);
  const second = (await queue(key.secret)).body;
  const [fresh] = await pollUntil(
    async () => eventsFor(second.id),
    (e) => e.length >= 1,
  );
  expect(fresh.verifiedWith).toBe(newSecret);
});

test('after the webhook moves to another URL, pending retries go there, signed with the secret given with it; the old URL sees no more', async () => {
  const { acct, key, webhookSecret: oldSecret } = await keyWithWebhook();
  const moved = await startWebhookReceiver();
  try {
    receiver.verifyWith([oldSecret]);
    receiver.failNextRequests(1);
    const first = (await queue(key.secret)).body;
    await pollUntil(
      async () => eventsFor(first.id),
      (e) => e.length >= 1,
    );
    const res = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url: moved.url } });
    const newSecret = res.body.secret as string;
    moved.verifyWith([newSecret]);
    const [retry] = await pollUntil(
      async () => moved.received.filter((e) => e.body.data?.id === first.id),
      (e) => e.length >= 1,
    );
    expect(retry.headers['x-svc-delivery-attempt']).toBe('2');
    expect(retry.verifiedWith).toBe(newSecret);
    await deliveryOver(String(retry.headers['x-svc-delivery-id']));
    expect(eventsFor(first.id)).toHaveLength(1);
  } finally {
    await moved.close();
  }
});

test('after the URL is cleared the receiver sees nothing, not even pending retries', async () => {
  const { acct, key, webhookSecret } = await keyWithWebhook();
  receiver.verifyWith([webhookSecret]);
  receiver.failNextRequests(1);
  const first = (await queue(key.secret)).body;
  const [attempt] = await pollUntil(
    async () => eventsFor(first.id),
    (e) => e.length >= 1,
  );
  const cleared = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url: null } });
  expect(cleared.body).toEqual({ ok: true, url: null });
  const second = (await queue(key.secret)).body;
  await pollUntil(
    () => gw.api('POST', '/v1/video/retrieve', { token: key.secret, body: { id: second.id } }),
    (r) => r.body.status === 'COMPLETED',
  );
  // The pending retry has run and found no webhook; the second job's event scheduled none.
  await deliveryOver(String(attempt.headers['x-svc-delivery-id']));
  expect(
    await gw.gateway.database.db.all(`select ref from work_items where kind = 'webhook_delivery' and payload->>'eventId' like ?`, [`%${second.id}%`]),
  ).toEqual([]);
  expect(eventsFor(first.id)).toHaveLength(1);
  expect(eventsFor(second.id)).toHaveLength(0);
  const keys = await gw.api('GET', '/account/api-keys', { token: acct.idToken });
  expect(keys.body.data[0].webhook).toBeNull();
});

test('webhook body validation', async () => {
  const acct = await gw.newAccount();
  const key = await gw.newKey(acct);
  const regen = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { regenerateSecret: true } });
  expect(regen.status).toBe(400);
  const empty = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: {} });
  expect(empty.status).toBe(400);
  const notUrl = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url: 'not a url' } });
  expect(notUrl.body.error).toMatchObject({ type: 'invalid_request_error', param: 'url' });
});

describe('webhook URLs without WEBHOOK_ALLOW_LOCAL', () => {
  const strict = useTestGateway();

  test('http://, loopback, metadata, [::1], private and loopback-resolving names are refused with 400 param url', async () => {
    const acct = await strict.newAccount();
    const key = await strict.newKey(acct);
    const urls = [
      'http://93.184.216.34/hook',
      'https://127.0.0.1/hook',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/hook',
      'https://10.0.0.8/hook',
      'https://192.168.1.20/hook',
      'https://localhost/hook',
      'https://[::ffff:127.0.0.1]/hook',
    ];
    // A name that resolves to loopback through the system resolver (this machine's own hostname
    // usually does); the unit tests of url-check cover the same rule with an injected resolver.
    for (const name of [hostname(), 'vm']) {
      const addr = await lookup(name).catch(() => null);
      if (addr && addr.address.startsWith('127.')) {
        urls.push(`https://${name}/hook`);
        break;
      }
    }
    for (const url of urls) {
      const res = await strict.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url } });
      expect([url, res.status, res.body.error?.param]).toEqual([url, 400, 'url']);
    }
    const ok = await strict.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url: 'https://93.184.216.34/hook' } });
    expect(ok.status).toBe(200);
  });
});
