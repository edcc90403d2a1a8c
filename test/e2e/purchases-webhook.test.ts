/**
 * What Stripe's events do to a purchase, sent as Stripe sends them (signed with the real
 * package's generateTestHeaderString, over HTTP, by a fake Stripe on a socket): a paid session
 * grants its credits once, whatever the deliveries (20 at once, replays), as a ledger entry
 * naming the session, with one `purchase.completed` to the account's webhook; an unpaid one
 * grants nothing until its delayed payment succeeds; a tampered body, a wrong secret and a
 * 10-minute-old signature are refused with 400 and nothing done; a refund takes back its share,
 * never below zero, recording what the balance could not give.
 */
import { useTestGateway } from '../support/use-test-gateway';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { pollUntil } from '../support/poll';
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';

let stripe: FakeStripe;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  stripe = await startFakeStripe();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await stripe.close();
  await receiver.close();
});
const gw = useTestGateway(() => ({
  STRIPE_SECRET_KEY: stripe.secretKey,
  STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
  STRIPE_API_BASE: stripe.url,
  CREDIT_PURCHASE_MIN: '50',
  WEBHOOK_ALLOW_LOCAL: '1',
}));
beforeAll(() => stripe.setWebhookUrl(`${gw.url}/webhooks/stripe`));

const db = () => gw.gateway.database.db;
const startCheckout = async (acct: TestAccount, credits: number): Promise<string> => {
  const res = await gw.api('POST', '/account/checkout', { token: acct.idToken, body: { credits } });
  expect(res.status).toBe(200);
  return res.body.id as string;
};
const statusOf = async (acct: TestAccount, id: string) =>
  ((await gw.api('GET', '/account/purchases', { token: acct.idToken })).body.data as any[]).find((p) => p.id === id)?.status;
/** The ledger entries naming the purchase, credits as numbers (PGlite and PostgreSQL hand bigints over differently). */
const purchaseEntries = async (id: string) =>
  (
    await db().all<{ amount_micro: string | number; kind: string; reason: string }>(
      `select amount_micro, kind, reason from ledger_entries where reference = ? order by id`,
      [id],
    )
  ).map((e) => ({ credits: Number(e.amount_micro) / 1e6, kind: e.kind, reason: e.reason }));
const eventRows = (acct: TestAccount) => db().all<{ type: string; data: any }>(`select type, data from account_events where account_id = ?`, [acct.id]);

test("paying on Stripe's Checkout page grants the credits, names the session in the ledger and tells the account once", async () => {
  const acct = await gw.newAccount(2);
  const set = await gw.api('PATCH', '/account/webhook', { token: acct.idToken, body: { url: receiver.url } });
  receiver.verifyWith([set.body.secret]);
  const id = await startCheckout(acct, 700);
  const page = await fetch(`${stripe.url}/checkout/${id}`);
  expect(await page.text()).toContain('Pay 7.00 USD');
  // The page's Pay button: the session is completed, its event sent (and answered) before the redirect.
  const paid = await fetch(`${stripe.url}/checkout/${id}/pay`, { method: 'POST', redirect: 'manual' });
  expect([paid.status, paid.headers.get('location')]).toEqual([303, `${gw.url}/console/#/purchases?session=${id}`]);
  expect(await gw.balance(acct)).toBe(702);
  expect(await statusOf(acct, id)).toBe('completed');
  expect(await purchaseEntries(id)).toEqual([{ credits: 700, kind: 'grant', reason: 'credit purchase' }]);
  const statement = await gw.api('GET', '/account/ledger-entries?first=1', { token: acct.idToken });
  expect(statement.body.data[0]).toMatchObject({ kind: 'grant', credits: 700, reference: id, reason: 'credit purchase' });

  const [event] = await pollUntil(
    async () => receiver.received.filter((e) => e.body.data?.purchaseId === id),
    (events) => events.length > 0,
  );
  expect(event.verifiedWith).toBe(set.body.secret);
  expect(event.headers['x-svc-event']).toBe('purchase.completed');
  expect(event.body).toEqual({
    id: expect.stringMatching(/^evt_/),
    type: 'purchase.completed',
    created: expect.any(Number),
    data: { purchaseId: id, credits: 700, amountUsd: 7 },
  });

  // Stripe sends it again (a retry after a lost answer): 200, nothing more.
  const again = await stripe.deliver(stripe.sent.at(-1)!);
  expect(again).toEqual({ status: 200, body: { received: true } });
  expect(await gw.balance(acct)).toBe(702);
  expect(await eventRows(acct)).toHaveLength(1);
});

test('20 deliveries of one paid session at once grant it once', async () => {
  const acct = await gw.newAccount();
  const id = await startCheckout(acct, 250);
  const signed = stripe.sign(stripe.complete(id));
  const answers = await Promise.all(Array.from({ length: 20 }, () => stripe.send(signed)));
  expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
  expect(await gw.balance(acct)).toBe(250);
  expect(await purchaseEntries(id)).toHaveLength(1);
  expect((await eventRows(acct)).map((e) => e.type)).toEqual(['purchase.completed']);
});

test('a member is granted 1.55 times the credits the price buys', async () => {
  const acct = await gw.newAccount();
  expect((await gw.api('PATCH', `/admin/accounts/${acct.id}`, { token: ADMIN_TOKEN, body: { member: true } })).status).toBe(200);
  const id = await startCheckout(acct, 1000);
  expect(stripe.sessions.get(id)!.amount_total).toBe(1000);
  expect((await stripe.deliver(stripe.complete(id))).status).toBe(200);
  expect(await gw.balance(acct)).toBe(1550);
});

test('a completed session whose payment is still under way grants nothing until it succeeds; one that fails or expires is closed', async () => {
  const acct = await gw.newAccount();
  const delayed = await startCheckout(acct, 100);
  expect((await stripe.deliver(stripe.complete(delayed, { paid: false }))).status).toBe(200);
  expect([await gw.balance(acct), await statusOf(acct, delayed)]).toEqual([0, 'pending']);
  expect((await stripe.deliver(stripe.asyncPayment(delayed, true))).status).toBe(200);
  expect([await gw.balance(acct), await statusOf(acct, delayed)]).toEqual([100, 'completed']);

  const failed = await startCheckout(acct, 100);
  await stripe.deliver(stripe.complete(failed, { paid: false }));
  expect((await stripe.deliver(stripe.asyncPayment(failed, false))).status).toBe(200);
  const expired = await startCheckout(acct, 100);
  expect((await stripe.deliver(stripe.expire(expired))).status).toBe(200);
  expect([await statusOf(acct, failed), await statusOf(acct, expired), await gw.balance(acct)]).toEqual(['failed', 'expired', 100]);
});

test('a tampered body, a wrong secret, a 10-minute-old signature and none at all are refused with 400, and nothing is granted', async () => {
  const acct = await gw.newAccount();
  const id = await startCheckout(acct, 300);
  const event = stripe.complete(id);
  const good = stripe.sign(event);
  const tampered = { payload: good.payload.replace('"amount_total": 300', '"amount_total": 30000'), header: good.header };
  expect(tampered.payload).not.toBe(good.payload);
  const cases = {
    tampered,
    wrongSecret: stripe.sign(event, { secret: 'whsec_not_the_endpoints' }),
    tenMinutesOld: stripe.sign(event, { timestamp: Math.floor(Date.now() / 1000) - 600 }),
    unsigned: { payload: good.payload },
  };
  const answers = Object.fromEntries(await Promise.all(Object.entries(cases).map(async ([name, signed]) => [name, await stripe.send(signed)] as const)));
  expect(Object.fromEntries(Object.entries(answers).map(([name, a]) => [name, [a.status, a.body.error.type, a.body.error.code]]))).toEqual({
    tampered: [400, 'invalid_request_error', 'signature_invalid'],
    wrongSecret: [400, 'invalid_request_error', 'signature_invalid'],
    tenMinutesOld: [400, 'invalid_request_error', 'signature_expired'],
    unsigned: [400, 'invalid_request_error', 'signature_missing'],
  });
  expect([await gw.balance(acct), await statusOf(acct, id), await purchaseEntries(id)]).toEqual([0, 'pending', []]);
  // The same event, signed as Stripe signs it, still goes through.
  expect((await stripe.send(good)).status).toBe(200);
  expect(await gw.balance(acct)).toBe(300);
});

test('events of other kinds, and sessions this service did not make, answer 200 and change nothing', async () => {
  const acct = await gw.newAccount(5);
  for (const e of [
    stripe.event('customer.created', { id: 'cus_1', object: 'customer' }),
    stripe.event('checkout.session.completed', { id: 'cs_test_other', object: 'checkout.session', payment_status: 'paid', amount_total: 500, metadata: {} }),
    stripe.event('checkout.session.completed', {
      id: 'cs_test_forged',
      payment_status: 'paid',
      amount_total: 500,
      client_reference_id: 'acct_someoneelse',
      metadata: { svc_account: acct.id, svc_credits_micro: '500000000' },
    }),
    stripe.event('charge.refunded', { id: 'ch_1', amount: 500, amount_refunded: 500, payment_intent: 'pi_unknown' }),
  ]) {
    expect([e.type, (await stripe.deliver(e)).status]).toEqual([e.type, 200]);
  }
  expect(await gw.balance(acct)).toBe(5);
});

test('refunds take back their share of the credits, cumulatively, never below zero; what was spent is the shortfall', async () => {
  const acct = await gw.newAccount();
  const key = await gw.newKey(acct);
  const id = await startCheckout(acct, 100);
  await stripe.deliver(stripe.complete(id));
  expect(await gw.balance(acct)).toBe(100);

  // 40% refunded: 40 credits back to Stripe's customer, taken from the balance.
  const partial = stripe.refund(id, 40);
  expect((await stripe.deliver(partial)).status).toBe(200);
  expect([await gw.balance(acct), await statusOf(acct, id)]).toEqual([60, 'partially_refunded']);
  expect((await stripe.deliver(partial)).status).toBe(200);
  expect(await gw.balance(acct)).toBe(60);

  // Spent meanwhile: a 50-credit video, then an image paid from a credit lease this instance
  // holds (2.5 credits taken from the account row, 1.5 of them unspent).
  const video = { model: 'svc-2.5-preview-text-to-video', prompt: 'waves', duration: '10s', resolution: '1080p' };
  expect((await gw.api('POST', '/v1/video/queue', { token: key.secret, body: video })).status).toBe(200);
  const image = await gw.api('POST', '/v1/images/generations', { token: key.secret, body: { model: 'svc-creative-v8', prompt: 'a kite', size: '256x256' } });
  expect(image.status).toBe(200);
  expect(await gw.balance(acct)).toBe(9);
  const row = async () => Number((await db().one<{ b: string | number }>(`select balance_micro as b from accounts where id = ?`, [acct.id]))!.b) / 1e6;
  expect(await row()).toBe(7.5);

  // The rest refunded: 60 more are due; the 9 left (the lease's unspent part called back) are taken, 51 are short.
  expect((await stripe.deliver(stripe.refund(id, 60))).status).toBe(200);
  expect([await gw.balance(acct), await statusOf(acct, id)]).toEqual([0, 'refunded']);
  expect(await purchaseEntries(id)).toEqual([
    { credits: 100, kind: 'grant', reason: 'credit purchase' },
    { credits: -40, kind: 'grant', reason: 'credit purchase refunded' },
    { credits: -9, kind: 'grant', reason: 'credit purchase refunded' },
  ]);
  const purchase = await db().one<Record<string, string | number>>(`select refunded_cents, taken_back_micro, shortfall_micro from purchases where id = ?`, [
    id,
  ]);
  expect([purchase!.refunded_cents, purchase!.taken_back_micro, purchase!.shortfall_micro].map(Number)).toEqual([100, 49e6, 51e6]);
  // The earlier partial refund arriving late, and the last one again, take nothing more.
  expect((await stripe.deliver(partial)).status).toBe(200);
  expect((await stripe.deliver(stripe.refund(id, 0))).status).toBe(200);
  expect((await purchaseEntries(id)).length).toBe(3);
  expect(await gw.balance(acct)).toBe(0);
});
