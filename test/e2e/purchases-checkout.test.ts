/**
 * Buying credits as a customer starts it: POST /account/checkout (and GraphQL createCheckout)
 * makes a Stripe Checkout Session with the real `stripe` package against a fake Stripe on a
 * socket, priced by the server, granting what the server fixed (a member's 1.55 times the
 * credits), its purchase listed `pending`; refused amounts reach no Stripe and record nothing;
 * Stripe failing is a 502 that records nothing; without STRIPE_SECRET_KEY, checkout is a 404.
 */
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe';

let stripe: FakeStripe;
beforeAll(async () => {
  stripe = await startFakeStripe();
});
afterAll(async () => {
  await stripe.close();
});
const gw = useTestGateway(() => ({
  STRIPE_SECRET_KEY: stripe.secretKey,
  STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
  STRIPE_API_BASE: stripe.url,
  CREDIT_PRICE_USD: '0.012',
  CREDIT_PURCHASE_MIN: '50',
  CREDIT_PURCHASE_MAX: '20000',
}));

const checkout = (acct: TestAccount, body: unknown) => gw.api('POST', '/account/checkout', { token: acct.idToken, body });
const purchases = async (acct: TestAccount, query = '') => (await gw.api('GET', `/account/purchases${query}`, { token: acct.idToken })).body;
const graphql = async (acct: TestAccount, query: string, variables: Record<string, unknown> = {}) =>
  (await gw.api('POST', '/graphql', { token: acct.idToken, body: { query, variables } })).body;

test('a checkout is a Stripe session priced by the server, granting the credits asked for, recorded pending', async () => {
  const acct = await gw.newAccount(3);
  const res = await checkout(acct, { credits: 1250 });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ id: expect.stringMatching(/^cs_test_/), url: `${stripe.url}/checkout/${res.body.id}` });

  const sent = stripe.sessions.get(res.body.id)!;
  expect(sent.request).toMatchObject({
    mode: 'payment',
    client_reference_id: acct.id,
    // 1,250 × 0.012 USD: 15.00 USD, one line item.
    line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: '1500', product_data: { name: '1,250 credits' } } }],
    metadata: { svc_account: acct.id, svc_credits_micro: '1250000000' },
    success_url: `${gw.url}/console/#/purchases?session={CHECKOUT_SESSION_ID}`,
    cancel_url: `${gw.url}/console/#/purchases?cancelled=1`,
  });
  const call = stripe.requests.find((r) => r.path === '/v1/checkout/sessions')!;
  expect(call.headers.authorization).toBe(`Bearer ${stripe.secretKey}`);
  expect(call.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);

  const list = await purchases(acct);
  expect(list).toEqual({
    object: 'list',
    data: [{ id: res.body.id, credits: 1250, amountUsd: 15, status: 'pending', created: expect.any(Number) }],
    hasMore: false,
    nextCursor: null,
  });
  // Nothing is granted before Stripe says the session is paid.
  expect(await gw.balance(acct)).toBe(3);
});

test("a member's checkout grants 1.55 times the credits for the same price, rounded down to micro-credits", async () => {
  const acct = await gw.newAccount();
  expect((await gw.api('PATCH', `/admin/accounts/${acct.id}`, { token: ADMIN_TOKEN, body: { member: true } })).status).toBe(200);
  const res = await checkout(acct, { credits: 333 });
  const sent = stripe.sessions.get(res.body.id)!;
  // 333 × 0.012 = 3.996 USD: 4.00 USD charged; 333 × 1.55 = 516.15 credits granted.
  expect(sent.amount_total).toBe(400);
  expect(sent.metadata).toEqual({ svc_account: acct.id, svc_credits_micro: '516150000' });
  expect((sent.request as any).line_items[0].price_data.product_data).toEqual({ name: '516.15 credits', description: '333 credits with the member bonus' });
  expect((await purchases(acct)).data).toEqual([expect.objectContaining({ id: res.body.id, credits: 516.15, amountUsd: 4, status: 'pending' })]);
});

test('an amount out of bounds, fractional or named wrong is a 400 naming the field; Stripe is not asked and nothing is recorded', async () => {
  const acct = await gw.newAccount();
  const before = stripe.requests.length;
  for (const body of [{ credits: 49 }, { credits: 20001 }, { credits: 100.5 }, { credits: '100' }, { credits: -100 }, {}]) {
    const res = await checkout(acct, body);
    expect([JSON.stringify(body), res.status, res.body.error.type, res.body.error.param]).toEqual([
      JSON.stringify(body),
      400,
      'invalid_request_error',
      'credits',
    ]);
  }
  expect((await checkout(acct, { credits: 100, creditsMicro: 1 })).body.error.param).toBe('creditsMicro');
  expect((await gw.api('POST', '/account/checkout', { token: acct.idToken, rawBody: 'credits=100', headers: { 'content-type': 'text/plain' } })).status).toBe(
    400,
  );
  expect(stripe.requests.length).toBe(before);
  expect((await purchases(acct)).data).toEqual([]);
  expect((await gw.api('POST', '/account/checkout', { body: { credits: 100 } })).status).toBe(401);
});

test('Stripe failing is a 502 that charges and records nothing; a retry makes the session', async () => {
  const acct = await gw.newAccount();
  // Three 500s: the package tries three times (its retries carry the first attempt's Idempotency-Key), then gives up.
  stripe.failNextSessions(3);
  const res = await checkout(acct, { credits: 100 });
  expect(res.status).toBe(502);
  expect(res.body.error).toEqual({ type: 'upstream_error', code: 'payment_provider_error', param: null, message: expect.any(String) });
  expect(JSON.stringify(res.body)).not.toContain(stripe.secretKey);
  expect((await purchases(acct)).data).toEqual([]);
  const again = await checkout(acct, { credits: 100 });
  expect(again.status).toBe(200);
  expect((await purchases(acct)).data.map((p: any) => p.id)).toEqual([again.body.id]);
});

test('the list pages newest first by cursor, and reads only the caller’s purchases', async () => {
  const acct = await gw.newAccount();
  const ids: string[] = [];
  for (const credits of [100, 200, 300]) ids.push((await checkout(acct, { credits })).body.id);
  const first = await purchases(acct, '?first=2');
  expect(first.data.map((p: any) => p.credits)).toEqual([300, 200]);
  expect(first.hasMore).toBe(true);
  expect(first.nextCursor).toBe(ids[1]);
  const rest = await purchases(acct, `?first=2&after=${first.nextCursor}`);
  expect([rest.data.map((p: any) => p.id), rest.hasMore, rest.nextCursor]).toEqual([[ids[0]], false, null]);

  const other = await gw.newAccount();
  expect((await purchases(other, `?after=${ids[2]}`)).data).toEqual([]);
  for (const query of ['?first=0', '?first=101', '?first=1e1', '?after=pur_1', '?limit=2']) {
    const res = await gw.api('GET', `/account/purchases${query}`, { token: acct.idToken });
    expect([query, res.status]).toEqual([query, 400]);
  }
});

test('GraphQL: creditPrice, createCheckout and purchases, as REST answers them', async () => {
  const acct = await gw.newAccount();
  expect((await graphql(acct, '{ creditPrice { usdPerCredit memberBonus min max } }')).data).toEqual({
    creditPrice: { usdPerCredit: 0.012, memberBonus: 1.55, min: 50, max: 20000 },
  });
  const made = await graphql(acct, 'mutation($c: Int!) { createCheckout(credits: $c) { id url } }', { c: 500 });
  expect(made.data.createCheckout).toEqual({ id: expect.stringMatching(/^cs_test_/), url: expect.stringContaining('/checkout/cs_test_') });
  expect(stripe.sessions.get(made.data.createCheckout.id)!.amount_total).toBe(600);
  const refused = await graphql(acct, 'mutation { createCheckout(credits: 20001) { id } }');
  expect(refused.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'credits' });
  const listed = await graphql(acct, '{ purchases(first: 5) { nodes { id credits amountUsd status created } pageInfo { hasNextPage endCursor } } }');
  expect(listed.data.purchases).toEqual({
    nodes: [{ id: made.data.createCheckout.id, credits: 500, amountUsd: 6, status: 'PENDING', created: expect.any(String) }],
    pageInfo: { hasNextPage: false, endCursor: made.data.createCheckout.id },
  });
  const key = await gw.newKey(acct);
  const byKey = await gw.api('POST', '/graphql', { token: key.secret, body: { query: '{ purchases { nodes { id } } }' } });
  expect(byKey.body.errors[0].extensions.code).toBe('permission_error');
});

describe('without STRIPE_SECRET_KEY', () => {
  const off = useTestGateway();

  test('checkout and the webhook answer 404, the list answers, and creditPrice is null', async () => {
    const acct = await off.newAccount();
    const res = await off.api('POST', '/account/checkout', { token: acct.idToken, body: { credits: 100 } });
    expect([res.status, res.body.error.code]).toEqual([404, 'checkout_disabled']);
    const hook = await off.api('POST', '/webhooks/stripe', { rawBody: '{"id":"evt_1","type":"x","data":{}}', headers: { 'stripe-signature': 't=1,v1=ab' } });
    expect([hook.status, hook.body.error.code]).toEqual([404, 'checkout_disabled']);
    expect((await off.api('GET', '/account/purchases', { token: acct.idToken })).body).toEqual({ object: 'list', data: [], hasMore: false, nextCursor: null });
    const price = await off.api('POST', '/graphql', { token: acct.idToken, body: { query: '{ creditPrice { usdPerCredit } }' } });
    expect(price.body.data).toEqual({ creditPrice: null });
  });
});
