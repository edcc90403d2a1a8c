/**
 * Buying credits in the console, in headless Chromium, against a fake Stripe on a socket (the
 * real `stripe` package talks to it; its Checkout page pays and sends the signed event). A member
 * sees the server's price (its rounding) and the 1.55 bonus before paying, pays on Stripe's page
 * and comes back to a page that waits for the webhook, which arrives after the buyer is back:
 * the balance changes there without a reload, and the history says Completed. A cancelled
 * checkout says nothing was charged. With Stripe off there is no Buy link or form. In the
 * DATABASE_URL + REDIS_URL pass, the webhook reaches instance B while the browser is on A.
 */
import type { Page } from 'playwright-core';
import { useTestGateway } from '../support/use-test-gateway';
import { useFixture } from '../support/fixture';
import { ADMIN_TOKEN, startTestGateway, type TestAccount, type TestGateway } from '../support/gateway-harness';
import { devSignIn, openPage, scrollsSideways, unnamedControls, useBrowser, type ConsolePage } from '../support/browser';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { postgresTemplate } from '../support/database-template';
import { pollUntil } from '../support/poll';

vi.setConfig({ testTimeout: 120_000 });

// Before the gateways' fixtures: the browser closes before they stop.
const chromium = useBrowser();
const stripes: FakeStripe[] = [];
const fakeStripe = async () => {
  const stripe = await startFakeStripe();
  stripes.push(stripe);
  return stripe;
};
afterAll(async () => {
  for (const s of stripes) await s.close();
});

/** 0.0125 USD a credit: 333 credits are 4.1625 USD, which the server charges as 4.16. */
const stripeEnv = (stripe: FakeStripe) => ({
  STRIPE_SECRET_KEY: stripe.secretKey,
  STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
  STRIPE_API_BASE: stripe.url,
  CREDIT_PRICE_USD: '0.0125',
});

const makeMember = async (gw: TestGateway, acct: TestAccount) =>
  expect((await gw.api('PATCH', `/admin/accounts/${acct.id}`, { token: ADMIN_TOKEN, body: { member: true } })).status).toBe(200);

/** Overview's Buy link to the Purchases view, then `credits` typed: answers the form. */
async function openBuyForm(page: Page, credits: string) {
  await page.getByRole('link', { name: 'Buy credits' }).click();
  await page.getByRole('heading', { name: 'Purchases', level: 1 }).waitFor();
  const form = page.getByRole('form', { name: 'Buy credits' });
  await form.getByLabel('Credits to buy').fill(credits);
  return form;
}

/** Buy, then Stripe's page: answers the session id its address names. */
async function goToCheckout(page: Page, stripe: FakeStripe, amount: string): Promise<string> {
  await page.getByRole('button', { name: 'Buy credits' }).click();
  await page.waitForURL(`${stripe.url}/checkout/**`);
  await page.getByRole('heading', { name: `Pay ${amount} USD` }).waitFor();
  return /\/checkout\/(cs_[A-Za-z0-9_]+)/.exec(page.url())![1];
}

/**
 * Pays on Stripe's page with the event held back, waits on the console's return page until its
 * subscription listens on `watching`, marks the window, and answers a check that no navigation
 * has happened since (the mark survives only in the same document).
 */
async function payAndReturn(cp: ConsolePage, stripe: FakeStripe, home: TestGateway, watching: TestGateway, id: string) {
  const { page } = cp;
  // Leaving for Stripe closed the console's socket: its subscriptions are gone on the gateway.
  await pollUntil(
    async () => watching.gateway.services.accountEvents.listeners,
    (n) => n === 0,
  );
  stripe.holdEvents(true);
  await page.getByRole('button', { name: 'Pay' }).click();
  await page.waitForURL(`${home.url}/console/#/purchases?session=${id}`);
  await page.getByTestId('purchase-return').getByText('Waiting for payment confirmation…').waitFor();
  await pollUntil(
    async () => watching.gateway.services.accountEvents.listeners,
    (n) => n === 1,
  );
  let navigations = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) navigations++;
  });
  await page.evaluate('window.__sameDocument = true');
  return async () => ({ navigations, sameDocument: await page.evaluate('window.__sameDocument === true'), url: page.url() });
}

describe('with Stripe', () => {
  let stripe: FakeStripe;
  beforeAll(async () => {
    stripe = await fakeStripe();
  });
  const gw = useTestGateway(() => stripeEnv(stripe));
  beforeAll(() => stripe.setWebhookUrl(`${gw.url}/webhooks/stripe`));

  test("a member sees the server's price and bonus, pays on Stripe's page, and the return page shows the balance live", async () => {
    const acct = await gw.newAccount(10);
    await makeMember(gw, acct);
    const cp = await openPage(chromium.browser, gw.url, 1280, 900);
    const { page } = cp;
    await devSignIn(page, gw.url, acct.subject);

    // Below the minimum: the gateway's refusal, and no Buy.
    const form = await openBuyForm(page, '50');
    await form.getByText('from 100 to 100000').waitFor();
    expect(await form.getByRole('button', { name: 'Buy credits' }).isDisabled()).toBe(true);
    await form.getByLabel('Credits to buy').fill('333');
    await form.getByTestId('buy-price').getByText('You pay 4.16 USD').waitFor();
    expect(await form.getByTestId('buy-receive').textContent()).toBe('You receive 516.15 credits (member bonus: 1.55 × 333).');
    expect(await page.getByTestId('purchases-balance').textContent()).toBe('10 credits');
    expect({ sideways: await scrollsSideways(page), unnamed: await unnamedControls(page) }).toEqual({ sideways: false, unnamed: [] });
    await cp.shot('buy-form-1280');

    const id = await goToCheckout(page, stripe, '4.16');
    // What Stripe was asked to charge is what the form showed.
    expect(stripe.sessions.get(id)!.amount_total).toBe(416);
    const stillHere = await payAndReturn(cp, stripe, gw, gw, id);
    await cp.shot('buy-waiting-1280');
    expect(await gw.balance(acct)).toBe(10);

    expect((await stripe.releaseHeld()).map((r) => r.status)).toEqual([200]);
    const back = page.getByTestId('purchase-return');
    await back.getByText('Payment received: 516.15 credits added.').waitFor();
    expect(await back.getByTestId('return-balance').textContent()).toBe('526.15 credits');
    expect(await page.getByTestId('purchases-balance').textContent()).toBe('526.15 credits');
    const row = page.locator(`tr[data-purchase-id="${id}"]`);
    await row.getByText('Completed').waitFor();
    expect(await row.textContent()).toContain('516.15 credits4.16 USD');
    expect(await stillHere()).toEqual({ navigations: 0, sameDocument: true, url: `${gw.url}/console/#/purchases?session=${id}` });
    expect(await gw.balance(acct)).toBe(526.15);
    await cp.shot('buy-completed-1280');

    await page.setViewportSize({ width: 390, height: 844 });
    expect({ sideways: await scrollsSideways(page), unnamed: await unnamedControls(page) }).toEqual({ sideways: false, unnamed: [] });
    await cp.shot('buy-completed-390');

    // Overview's balance follows a refund live too, once its own subscription listens.
    const subscriptions = vi.spyOn(gw.gateway.services.accountEvents, 'subscribe');
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByTestId('balance').getByText('526.15 credits').waitFor();
    await pollUntil(
      async () => subscriptions.mock.calls.length,
      (n) => n === 1,
    );
    subscriptions.mockRestore();
    expect((await stripe.deliver(stripe.refund(id, 416))).status).toBe(200);
    await page.getByTestId('balance').getByText('10 credits').waitFor();
    expect(cp.errors).toEqual([]);
    await cp.context.close();
  });

  test('a cancelled checkout says nothing was charged; the purchase stays pending in the history (390 px)', async () => {
    const acct = await gw.newAccount(5);
    const cp = await openPage(chromium.browser, gw.url, 390, 844);
    const { page } = cp;
    await devSignIn(page, gw.url, acct.subject);
    const form = await openBuyForm(page, '100');
    await form.getByTestId('buy-price').getByText('You pay 1.25 USD').waitFor();
    // Not a member: the credits asked for, no bonus.
    expect(await form.getByTestId('buy-receive').textContent()).toBe('You receive 100 credits.');
    expect({ sideways: await scrollsSideways(page), unnamed: await unnamedControls(page) }).toEqual({ sideways: false, unnamed: [] });
    await cp.shot('buy-form-390');

    const id = await goToCheckout(page, stripe, '1.25');
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL(`${gw.url}/console/#/purchases?cancelled=1`);
    await page.getByRole('heading', { name: 'Checkout cancelled' }).waitFor();
    await page.getByText('nothing was charged and no credits were added').waitFor();
    await page.locator(`tr[data-purchase-id="${id}"]`).getByText('Pending').waitFor();
    expect(await page.getByTestId('purchases-balance').textContent()).toBe('5 credits');
    expect(await gw.balance(acct)).toBe(5);
    expect(await scrollsSideways(page)).toBe(false);
    await cp.shot('buy-cancelled-390');
    expect(cp.errors).toEqual([]);
    await cp.context.close();
  });
});

describe('with Stripe off', () => {
  const gw = useTestGateway();

  test('there is no Buy link on Overview and no Buy form; the history still shows', async () => {
    const acct = await gw.newAccount(7);
    const cp = await openPage(chromium.browser, gw.url, 1280, 900);
    const { page } = cp;
    await devSignIn(page, gw.url, acct.subject);
    await page.getByTestId('balance').getByText('7 credits').waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('link', { name: 'Buy credits' }).count()).toBe(0);

    await page.getByRole('link', { name: 'Purchases' }).click();
    await page.getByText('Buying credits is not enabled on this service.').waitFor();
    await page.getByText('No purchases yet.').waitFor();
    expect(await page.getByRole('button', { name: 'Buy credits' }).count()).toBe(0);
    expect(await page.getByLabel('Credits to buy').count()).toBe(0);
    await cp.shot('buy-stripe-off-1280');
    expect(cp.errors).toEqual([]);
    await cp.context.close();
  });
});

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;

shared('two instances', () => {
  let stripe: FakeStripe;
  let scratch: { url: string; drop: () => Promise<void> };
  beforeAll(async () => {
    stripe = await fakeStripe();
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_buy', postgresTemplate());
  });
  const instance = (name: string) =>
    useFixture(
      name,
      () => startTestGateway({ DATABASE_URL: scratch.url, ...stripeEnv(stripe) }),
      (gw) => gw.close(),
    );
  const a = instance('instance A');
  const b = instance('instance B');
  afterAll(async () => {
    await scratch?.drop();
  });

  test("Stripe's webhook reaches instance B while the browser is on A: A's return page shows the balance live", async () => {
    stripe.setWebhookUrl(`${b.url}/webhooks/stripe`);
    const acct = await a.newAccount(2);
    const cp = await openPage(chromium.browser, a.url, 1280, 900);
    const { page } = cp;
    await devSignIn(page, a.url, acct.subject);
    const form = await openBuyForm(page, '200');
    await form.getByTestId('buy-price').getByText('You pay 2.50 USD').waitFor();
    const id = await goToCheckout(page, stripe, '2.50');
    const stillHere = await payAndReturn(cp, stripe, a, a, id);

    expect((await stripe.releaseHeld()).map((r) => r.status)).toEqual([200]);
    const back = page.getByTestId('purchase-return');
    await back.getByText('Payment received: 200 credits added.').waitFor();
    expect(await back.getByTestId('return-balance').textContent()).toBe('202 credits');
    expect(await stillHere()).toEqual({ navigations: 0, sameDocument: true, url: `${a.url}/console/#/purchases?session=${id}` });
    expect(await b.balance(acct)).toBe(202);
    expect(cp.errors).toEqual([]);
    await cp.context.close();
  });
});
