/**
 * What the console's Buy form and return page read, over GraphQL against a fake Stripe on a
 * socket: creditQuote answers what createCheckout then charges and grants (the server's rounding,
 * a member's bonus) and refuses what it refuses; purchase(id) is the caller's own only; and
 * accountUpdated over graphql-ws brings the caller's own purchases as they are paid, refunded or
 * expire, each with the balance it left, and never another account's.
 */
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe';
import { pollUntil } from '../support/poll';

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
  CREDIT_PRICE_USD: '0.0125',
}));
beforeAll(() => stripe.setWebhookUrl(`${gw.url}/webhooks/stripe`));

const clients: Client[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.dispose()));
});

const graphql = async (token: string, query: string, variables: Record<string, unknown> = {}) =>
  (await gw.api('POST', '/graphql', { token, body: { query, variables } })).body;

const quote = (acct: TestAccount, credits: unknown) =>
  graphql(acct.idToken, 'query($c: Int!) { creditQuote(credits: $c) { credits amountUsd creditsGranted member } }', { c: credits });

async function checkout(acct: TestAccount, credits: number): Promise<string> {
  const res = await gw.api('POST', '/account/checkout', { token: acct.idToken, body: { credits } });
  expect(res.status).toBe(200);
  return res.body.id as string;
}

/** accountUpdated for `token`, its updates collected; resolves once the gateway listens for it. */
async function watchAccount(token: string) {
  const updates: any[] = [];
  const errors: unknown[] = [];
  const client = createClient({
    url: `${gw.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${token}` },
  });
  clients.push(client);
  const before = gw.gateway.services.accountEvents.listeners;
  client.subscribe(
    { query: 'subscription { accountUpdated { account { id balance } purchase { id credits amountUsd status } } }' },
    { next: (r) => (r.errors ? errors.push(r.errors) : updates.push(r.data!.accountUpdated)), error: (e) => errors.push(e), complete: () => undefined },
  );
  await pollUntil(
    async () => gw.gateway.services.accountEvents.listeners,
    (n) => n === before + 1,
  );
  return { updates, errors };
}

test("creditQuote is what createCheckout charges and grants: the server's rounding, a member's bonus", async () => {
  const plain = await gw.newAccount();
  const member = await gw.newAccount();
  expect((await gw.api('PATCH', `/admin/accounts/${member.id}`, { token: ADMIN_TOKEN, body: { member: true } })).status).toBe(200);

  // 333 × 0.0125 = 4.1625 USD: 4.16 charged; a member receives 333 × 1.55 = 516.15 credits.
  expect((await quote(plain, 333)).data.creditQuote).toEqual({ credits: 333, amountUsd: 4.16, creditsGranted: 333, member: false });
  expect((await quote(member, 333)).data.creditQuote).toEqual({ credits: 333, amountUsd: 4.16, creditsGranted: 516.15, member: true });
  // 1,001 × 0.0125 = 12.5125: half a cent or less is rounded as the checkout rounds it.
  const odd = (await quote(member, 1001)).data.creditQuote;
  const id = await checkout(member, 1001);
  const session = stripe.sessions.get(id)!;
  expect(Math.round(odd.amountUsd * 100)).toBe(session.amount_total);
  expect(odd.creditsGranted * 1e6).toBe(Number(session.metadata.svc_credits_micro));
  const listed = (await graphql(member.idToken, '{ purchases { nodes { id credits amountUsd } } }')).data.purchases.nodes;
  expect(listed).toEqual([{ id, credits: odd.creditsGranted, amountUsd: odd.amountUsd }]);
});

test('creditQuote refuses what checkout refuses, naming credits, and needs the owner', async () => {
  const acct = await gw.newAccount();
  for (const credits of [99, 100001]) {
    const res = await quote(acct, credits);
    expect(res.data).toBeNull();
    expect(res.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'credits' });
    expect(res.errors[0].message).toContain('from 100 to 100000');
  }
  const key = await gw.newKey(acct);
  const byKey = await graphql(key.secret, '{ creditQuote(credits: 100) { amountUsd } }');
  expect(byKey.errors[0].extensions.code).toBe('permission_error');
});

test("purchase(id) answers the caller's own purchase only", async () => {
  const owner = await gw.newAccount();
  const other = await gw.newAccount();
  const id = await checkout(owner, 400);
  const q = 'query($id: ID!) { purchase(id: $id) { id credits amountUsd status } }';
  expect((await graphql(owner.idToken, q, { id })).data.purchase).toEqual({ id, credits: 400, amountUsd: 5, status: 'PENDING' });
  for (const [token, asked] of [
    [other.idToken, id],
    [owner.idToken, 'cs_test_nosuchsession'],
    [owner.idToken, 'not a session id'],
  ]) {
    const res = await graphql(token, q, { id: asked });
    expect(res.data).toBeNull();
    expect(res.errors[0].extensions).toMatchObject({ code: 'not_found_error', reason: 'purchase_not_found', param: 'id' });
    expect(res.errors[0].message).not.toContain(asked);
  }
});

test("accountUpdated brings the caller's own purchases as they are paid, refunded and expire, with the balance they left", async () => {
  const acct = await gw.newAccount(10);
  const other = await gw.newAccount(10);
  const mine = await watchAccount(acct.idToken);
  const theirs = await watchAccount(other.idToken);

  // Another account's payment, published before ours: it would arrive first if it leaked.
  const otherId = await checkout(other, 100);
  expect((await stripe.deliver(stripe.complete(otherId))).status).toBe(200);
  const id = await checkout(acct, 400);
  expect((await stripe.deliver(stripe.complete(id))).status).toBe(200);
  await pollUntil(
    async () => mine.updates.length,
    (n) => n === 1,
  );
  expect(mine.updates).toEqual([{ account: { id: acct.id, balance: 410 }, purchase: { id, credits: 400, amountUsd: 5, status: 'COMPLETED' } }]);
  await pollUntil(
    async () => theirs.updates.length,
    (n) => n === 1,
  );
  expect(theirs.updates).toEqual([{ account: { id: other.id, balance: 110 }, purchase: expect.objectContaining({ id: otherId, status: 'COMPLETED' }) }]);

  // A delivery again grants nothing and says nothing.
  expect((await stripe.deliver(stripe.complete(id))).status).toBe(200);
  // Half refunded, then all of it; then a checkout that expires unpaid.
  expect((await stripe.deliver(stripe.refund(id, 250))).status).toBe(200);
  expect((await stripe.deliver(stripe.refund(id, 250))).status).toBe(200);
  const unpaid = await checkout(acct, 100);
  expect((await stripe.deliver(stripe.expire(unpaid))).status).toBe(200);
  await pollUntil(
    async () => mine.updates.length,
    (n) => n === 4,
  );
  expect(mine.updates.slice(1).map((u) => [u.purchase.id, u.purchase.status, u.account.balance])).toEqual([
    [id, 'PARTIALLY_REFUNDED', 210],
    [id, 'REFUNDED', 10],
    [unpaid, 'EXPIRED', 10],
  ]);
  expect(theirs.updates).toHaveLength(1);
  expect([mine.errors, theirs.errors]).toEqual([[], []]);
});

test('accountUpdated needs the account owner: an API key is refused and nothing listens', async () => {
  const acct = await gw.newAccount();
  const key = await gw.newKey(acct);
  const client = createClient({
    url: `${gw.url.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${key.secret}` },
  });
  clients.push(client);
  const before = gw.gateway.services.accountEvents.listeners;
  // The refusal is the operation's one result, then it completes.
  const results = await new Promise<any[]>((resolve, reject) => {
    const seen: any[] = [];
    client.subscribe(
      { query: 'subscription { accountUpdated { account { balance } } }' },
      { next: (r) => seen.push(r), error: reject, complete: () => resolve(seen) },
    );
  });
  expect(results.map((r) => [r.data ?? null, r.errors[0].extensions.code])).toEqual([[null, 'permission_error']]);
  expect(gw.gateway.services.accountEvents.listeners).toBe(before);
});
