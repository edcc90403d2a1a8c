/**
 * Account alerts as a customer sees them: an account webhook (PATCH /account/webhook) that a
 * receiver on a socket verifies as it verifies a key's, and `balance.low` sent to it once per
 * crossing of `lowBalanceAlert` (PATCH /account) by the balance shown, with a stable id across
 * retries. The gateway keeps time on a fake clock: its worker claims work only when the test
 * steps that clock, and a retry's due time, on the database's clock, is brought forward by the
 * test as that clock would pass it.
 */
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { startWebhookReceiver, type ReceivedEvent } from '../support/webhook-receiver';
import { fakeClock } from '../support/fake-clock';
import { pollUntil } from '../support/poll';

let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
// Registered before the gateway's fixture, so the receiver closes before the gateway.
afterAll(async () => {
  await receiver.close();
});
const clock = fakeClock();
const gw = useTestGateway({ WEBHOOK_ALLOW_LOCAL: '1', WEBHOOK_RETRY_DELAYS: '60,120' }, { clock });
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
beforeEach(() => {
  receiver.received.length = 0;
  receiver.failNextRequests(0);
});

/** The worker's longest pause between claims (services.ts): a step of it lets the worker look for due work. */
const WORKER_IDLE_MS = 500;

async function accountWithWebhook(credits: number, lowBalanceAlert?: number) {
  const acct = await gw.newAccount(credits);
  const key = await gw.newKey(acct);
  const set = await gw.api('PATCH', '/account/webhook', { token: acct.idToken, body: { url: receiver.url } });
  expect(set.status).toBe(200);
  expect(set.body).toEqual({ ok: true, url: receiver.url, secret: expect.stringMatching(/^whsec_/) });
  if (lowBalanceAlert !== undefined) {
    const patched = await gw.api('PATCH', '/account', { token: acct.idToken, body: { lowBalanceAlert } });
    expect(patched.status).toBe(200);
  }
  receiver.verifyWith([set.body.secret]);
  return { acct, key, secret: set.body.secret as string };
}

/** One image of a creative model: 1 credit. */
async function image(secret: string): Promise<void> {
  const res = await gw.api('POST', '/v1/images/generations', { token: secret, body: { model: 'svc-creative-v8', prompt: 'a lighthouse', size: '1024x1024' } });
  expect(res.status).toBe(200);
}

/** The account's deliveries still to send (written in the transaction of the money move that caused them). */
const pending = async (acct: TestAccount) =>
  (
    await gw.gateway.database.db.all<{ ref: string; attempt: string; due_in: string }>(
      `select ref, payload->>'attempt' as attempt, extract(epoch from due_at - now()) as due_in
         from work_items where kind = 'webhook_delivery' and payload->>'accountId' = ? order by id`,
      [acct.id],
    )
  ).map((r) => ({ ref: r.ref, attempt: Number(r.attempt), dueInSeconds: Number(r.due_in) }));

const eventsOf = (acct: TestAccount): ReceivedEvent[] => receiver.received.filter((e) => e.body.data?.accountId === acct.id);

/** Steps the worker's clock until the account has nothing left to send; answers what its receiver got. */
async function deliverAll(acct: TestAccount): Promise<ReceivedEvent[]> {
  await pollUntil(
    async () => (await clock.tickAsync(WORKER_IDLE_MS), (await pending(acct)).length),
    (n) => n === 0,
  );
  return eventsOf(acct);
}

test('balance.low arrives once, signed, when a charge takes the balance shown below the alert; a lease sets off nothing', async () => {
  const { acct, key, secret } = await accountWithWebhook(10, 8.5);
  // The first call leases 2.5 credits (the account row drops to 7.5); the balance shown is 9.
  await image(key.secret);
  expect(await gw.balance(acct)).toBe(9);
  expect(await pending(acct)).toEqual([]);
  await image(key.secret);
  expect(await pending(acct)).toHaveLength(1);
  const [event] = await deliverAll(acct);
  expect(eventsOf(acct)).toHaveLength(1);
  expect(event.verifiedWith).toBe(secret);
  expect(event.headers).toMatchObject({
    'content-type': 'application/json',
    'user-agent': 'Svc-Webhook/1.0',
    'x-svc-event': 'balance.low',
    'x-svc-delivery-id': expect.stringMatching(/^dlv_/),
    'x-svc-delivery-attempt': '1',
  });
  expect(event.body).toEqual({
    id: expect.stringMatching(/^evt_/),
    type: 'balance.low',
    created: expect.any(Number),
    data: { accountId: acct.id, balance: 8, lowBalanceAlert: 8.5 },
  });
  // Still below: no second event.
  await image(key.secret);
  expect(await pending(acct)).toEqual([]);

  // Raised above by a grant (no event), then spent below again: a new event, with a new id.
  const grant = await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 5, reason: 'top-up' } });
  expect(grant.body.balance).toBe(12);
  expect(await pending(acct)).toEqual([]);
  for (let i = 0; i < 3; i++) await image(key.secret);
  expect(await pending(acct)).toEqual([]);
  await image(key.secret);
  const events = await deliverAll(acct);
  expect(events).toHaveLength(2);
  expect(events[1].body).toMatchObject({ type: 'balance.low', data: { balance: 8, lowBalanceAlert: 8.5 } });
  expect(events[1].body.id).not.toBe(event.body.id);

  const log = await gw.api('GET', '/account/webhook/deliveries', { token: acct.idToken });
  expect(log.status).toBe(200);
  expect(log.body.data.map((d: any) => [d.eventId, d.eventType, d.attempt, d.statusCode])).toEqual([
    [events[1].body.id, 'balance.low', 1, 200],
    [event.body.id, 'balance.low', 1, 200],
  ]);
});

test('a receiver that fails gets the event again after the retry delay: the same id, delivery id and bytes; the log shows both attempts', async () => {
  const { acct, key, secret } = await accountWithWebhook(10, 9.5);
  receiver.failNextRequests(1);
  await image(key.secret);
  const [first] = await pollUntil(
    async () => (await clock.tickAsync(WORKER_IDLE_MS), eventsOf(acct)),
    (e) => e.length === 1,
  );
  // The retry waits WEBHOOK_RETRY_DELAYS' first delay (60 s) on the database's clock: due later, as attempt 2.
  const [retry] = await pollUntil(
    () => pending(acct),
    (rows) => rows.length === 1 && rows[0].attempt === 2,
  );
  expect(retry.dueInSeconds).toBeGreaterThan(0);
  expect(eventsOf(acct)).toHaveLength(1);
  await gw.gateway.database.db.run(`update work_items set due_at = now() where kind = 'webhook_delivery' and ref = ?`, [retry.ref]);
  const [, second] = await deliverAll(acct);
  expect(eventsOf(acct)).toHaveLength(2);
  expect(second.raw).toBe(first.raw);
  expect(second.headers['x-svc-delivery-id']).toBe(first.headers['x-svc-delivery-id']);
  expect([first.headers['x-svc-delivery-attempt'], second.headers['x-svc-delivery-attempt']]).toEqual(['1', '2']);
  expect([first.verifiedWith, second.verifiedWith]).toEqual([secret, secret]);

  const log = await gw.api('GET', '/account/webhook/deliveries', { token: acct.idToken });
  expect(log.body.data).toEqual([
    expect.objectContaining({ eventId: first.body.id, deliveryId: first.headers['x-svc-delivery-id'], attempt: 2, statusCode: 200, error: null }),
    expect.objectContaining({ eventId: first.body.id, attempt: 1, statusCode: 500, error: 'HTTP 500' }),
  ]);
  // Another account reads its own log, in which none of this is.
  const stranger = await gw.newAccount();
  const theirs = await gw.api('GET', '/account/webhook/deliveries', { token: stranger.idToken });
  expect(theirs.body).toEqual({ object: 'list', data: [] });
});

test('without a threshold, spending the balance down sends nothing', async () => {
  const { acct, key } = await accountWithWebhook(3);
  expect((await gw.api('GET', '/account', { token: acct.idToken })).body.lowBalanceAlert).toBeNull();
  for (let i = 0; i < 3; i++) await image(key.secret);
  expect(await gw.balance(acct)).toBe(0);
  expect(await pending(acct)).toEqual([]);
  expect(await gw.gateway.database.db.all(`select id from account_events where account_id = ?`, [acct.id])).toEqual([]);
});

test('the secret is shown once; a new one is shown once more and signs the next events; the account shows only the URL; cleared, nothing is sent', async () => {
  const { acct, key, secret } = await accountWithWebhook(10, 9.5);
  const me = await gw.api('GET', '/account', { token: acct.idToken });
  expect(me.body).toMatchObject({ lowBalanceAlert: 9.5, webhook: { url: receiver.url } });
  const regen = await gw.api('PATCH', '/account/webhook', { token: acct.idToken, body: { regenerateSecret: true } });
  expect(regen.body).toEqual({ ok: true, url: receiver.url, secret: expect.stringMatching(/^whsec_/) });
  expect(regen.body.secret).not.toBe(secret);
  receiver.verifyWith([secret, regen.body.secret]);
  await image(key.secret);
  const [event] = await deliverAll(acct);
  expect(event.verifiedWith).toBe(regen.body.secret);
  const shown = JSON.stringify([
    (await gw.api('GET', '/account', { token: acct.idToken })).body,
    (await gw.api('GET', '/account/webhook/deliveries', { token: acct.idToken })).body,
  ]);
  expect(shown).not.toContain(secret);
  expect(shown).not.toContain(regen.body.secret);

  const cleared = await gw.api('PATCH', '/account/webhook', { token: acct.idToken, body: { url: null } });
  expect(cleared.body).toEqual({ ok: true, url: null });
  expect((await gw.api('GET', '/account', { token: acct.idToken })).body.webhook).toBeNull();
  // A new crossing (a new threshold is armed afresh) is recorded, but has nowhere to go.
  await gw.api('PATCH', '/account', { token: acct.idToken, body: { lowBalanceAlert: 8.5 } });
  await image(key.secret);
  expect(await gw.gateway.database.db.all(`select type from account_events where account_id = ?`, [acct.id])).toEqual([
    { type: 'balance.low' },
    { type: 'balance.low' },
  ]);
  expect(await pending(acct)).toEqual([]);
});

test('PATCH /account and PATCH /account/webhook refuse what they do not take, naming the field', async () => {
  const acct = await gw.newAccount();
  const patch = (path: string, body: unknown, unchecked = true) => gw.api('PATCH', path, { token: acct.idToken, body, unchecked });
  for (const lowBalanceAlert of [0, -1, 'five', 1.0000001, 2e9]) {
    const res = await patch('/account', { lowBalanceAlert });
    expect([lowBalanceAlert, res.status, res.body.error?.type, res.body.error?.param]).toEqual([
      lowBalanceAlert,
      400,
      'invalid_request_error',
      'lowBalanceAlert',
    ]);
  }
  expect((await patch('/account', { balance: 100 })).body.error).toMatchObject({ param: 'balance' });
  const set = await patch('/account', { lowBalanceAlert: 2.5 }, false);
  expect(set.body).toMatchObject({ id: acct.id, lowBalanceAlert: 2.5, webhook: null });
  expect((await patch('/account', { lowBalanceAlert: null }, false)).body.lowBalanceAlert).toBeNull();

  expect((await patch('/account/webhook', { url: 'not a url' })).body.error).toMatchObject({ type: 'invalid_request_error', param: 'url' });
  expect((await patch('/account/webhook', {})).body.error).toMatchObject({ param: 'url' });
  expect((await patch('/account/webhook', { regenerateSecret: false })).body.error).toMatchObject({ param: 'regenerateSecret' });
  // No webhook yet: nothing to make a new secret for.
  expect((await patch('/account/webhook', { regenerateSecret: true })).body.error).toMatchObject({ param: 'regenerateSecret' });
  expect((await patch('/account/webhook', { url: receiver.url, events: ['balance.low'] })).body.error).toMatchObject({ param: 'events' });
  const query = (q: string) => gw.api('GET', `/account/webhook/deliveries?${q}`, { token: acct.idToken, unchecked: true });
  expect((await query('limit=0x10')).body.error).toMatchObject({ param: 'limit' });
  expect((await query('keyId=svc_live_x')).body.error).toMatchObject({ param: 'keyId' });
});

describe('GraphQL', () => {
  const gql = (token: string, query: string, variables?: Record<string, unknown>) => gw.api('POST', '/graphql', { token, body: { query, variables } });

  test('the account webhook and the alert, set as over REST; the deliveries read; a wrong threshold names its argument', async () => {
    const acct = await gw.newAccount(10);
    const key = await gw.newKey(acct);
    const noWebhook = await gql(acct.idToken, 'mutation { regenerateAccountWebhookSecret { url secret } }');
    expect(noWebhook.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'regenerateSecret' });
    const set = await gql(acct.idToken, 'mutation($url: String) { setAccountWebhook(url: $url) { url secret } }', { url: receiver.url });
    expect(set.body.data.setAccountWebhook).toEqual({ url: receiver.url, secret: expect.stringMatching(/^whsec_/) });
    receiver.verifyWith([set.body.data.setAccountWebhook.secret]);
    const wrong = await gql(acct.idToken, 'mutation { setLowBalanceAlert(lowBalanceAlert: -1) { id } }');
    expect(wrong.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'lowBalanceAlert' });
    const alert = await gql(acct.idToken, 'mutation { setLowBalanceAlert(lowBalanceAlert: 9.5) { lowBalanceAlert webhook { url } } }');
    expect(alert.body.data.setLowBalanceAlert).toEqual({ lowBalanceAlert: 9.5, webhook: { url: receiver.url } });
    await image(key.secret);
    const [event] = await deliverAll(acct);
    expect(event.verifiedWith).toBe(set.body.data.setAccountWebhook.secret);
    const log = await gql(acct.idToken, '{ accountWebhookDeliveries(first: 10) { eventId eventType attempt statusCode } account { lowBalanceAlert } }');
    expect(log.body.data).toEqual({
      accountWebhookDeliveries: [{ eventId: event.body.id, eventType: 'balance.low', attempt: 1, statusCode: 200 }],
      account: { lowBalanceAlert: 9.5 },
    });
    const cleared = await gql(acct.idToken, 'mutation { setAccountWebhook(url: null) { url secret } }');
    expect(cleared.body.data).toEqual({ setAccountWebhook: { url: null, secret: null } });
    const unset = await gql(acct.idToken, 'mutation { setLowBalanceAlert(lowBalanceAlert: null) { lowBalanceAlert webhook { url } } }');
    expect(unset.body.data).toEqual({ setLowBalanceAlert: { lowBalanceAlert: null, webhook: null } });
  });
});
