import type { Page } from 'playwright-core';
import { ADMIN_TOKEN } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { openPage, scrollsSideways, unnamedControls, useBrowser } from '../support/browser';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe';

/**
 * The operator console at /console/admin: an operator signs in through the development provider
 * (a subject in ADMIN_SUBJECTS), finds an account, grants it credits with a reason, sees the
 * balance change and the audit log's entry; ADMIN_TOKEN pasted works too, every view lays out at
 * 390 px, and an identity that is not an operator's is told so and signed out.
 */
const OPERATOR = 'ops-carol';
let stripe: FakeStripe;
beforeAll(async () => {
  stripe = await startFakeStripe();
});
afterAll(async () => {
  await stripe?.close();
});
// Before the gateway's fixture, so the browser closes before the gateway.
const chromium = useBrowser();
const gw = useTestGateway(() => ({
  ADMIN_SUBJECTS: OPERATOR,
  STRIPE_SECRET_KEY: stripe.secretKey,
  STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
  STRIPE_API_BASE: stripe.url,
}));
beforeAll(() => stripe.setWebhookUrl(`${gw.url}/webhooks/stripe`));

/** The operator console's own sign-in: the provider's page, then back to /console/admin. */
async function operatorSignIn(page: Page, username: string): Promise<void> {
  await page.goto(`${gw.url}/console/admin`);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByLabel('User name').fill(username);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

test('an operator signs in, finds the account, grants credits with a reason; the balance and the audit log show it', async () => {
  const customer = await gw.newAccount(0);
  // The customer bought 100 credits: the purchase is listed with the account.
  const checkout = await gw.api('POST', '/account/checkout', { token: customer.idToken, body: { credits: 100 } });
  expect(checkout.status).toBe(200);
  expect((await fetch(`${stripe.url}/checkout/${checkout.body.id}/pay`, { method: 'POST', redirect: 'manual' })).status).toBe(303);
  const cp = await openPage(chromium.browser, gw.url, 1280, 900);
  const { page } = cp;
  await operatorSignIn(page, OPERATOR);
  await page.getByRole('heading', { name: 'Accounts', level: 1 }).waitFor();
  expect(new URL(page.url()).pathname).toBe('/console/admin');

  await page.getByLabel('Account id or subject').fill(customer.subject);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('heading', { name: `Accounts matching “${customer.subject}”` }).waitFor();
  const link = page.getByRole('link', { name: customer.id });
  await link.waitFor();
  await cp.shot('operator-accounts-1280');
  await link.click();
  await page.getByRole('heading', { name: customer.id }).waitFor();
  await expect(page.getByTestId('admin-balance').textContent()).resolves.toBe('100 credits');
  await page.getByRole('region', { name: 'Purchases' }).getByText(checkout.body.id).waitFor();

  // The reason is required before anything is sent.
  await page.getByLabel('Credits', { exact: true }).fill('20');
  await page.getByRole('button', { name: 'Grant credits' }).click();
  await page.getByText('A reason is required').waitFor();
  expect(await gw.balance(customer)).toBe(100);

  await page.getByLabel('Reason').fill('support goodwill');
  await page.getByRole('button', { name: 'Grant credits' }).click();
  await page.getByText('Granted 20 credits.').waitFor();
  await expect(page.getByTestId('admin-balance').textContent()).resolves.toBe('120 credits');
  expect(await gw.balance(customer)).toBe(120);
  // The statement below is read again: the grant is its newest entry.
  const statement = page.getByRole('region', { name: 'Statement' });
  await statement.getByText('support goodwill').waitFor();
  await cp.shot('operator-account-1280');

  await page.getByRole('link', { name: 'Audit log' }).click();
  await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
  const newest = page.locator('table.audit tbody tr').first();
  await newest.waitFor();
  const text = await newest.textContent();
  expect(text).toContain(`sub:${OPERATOR}`);
  expect(text).toContain('credits.grant');
  expect(text).toContain(customer.id);
  expect(text).toContain('balance: 100');
  expect(text).toContain('balance: 120');
  expect(text).toContain('reason: support goodwill');
  await cp.shot('operator-audit-1280');

  // The same entry, as GET /admin/audit has it.
  const audit = await gw.api('GET', '/admin/audit?first=1', { token: ADMIN_TOKEN });
  expect(audit.body.data[0]).toMatchObject({
    actor: `sub:${OPERATOR}`,
    action: 'credits.grant',
    target: customer.id,
    after: { balance: 120, reason: 'support goodwill' },
  });

  for (const view of ['Upstreams', 'Daily', 'Deliveries']) {
    await page.getByRole('link', { name: view }).click();
    await page.getByRole('heading', { name: view, level: 1 }).waitFor();
  }
  await page.getByRole('link', { name: 'Daily' }).click();
  await page.locator('.chart canvas').waitFor();
  await cp.shot('operator-daily-1280');
  await page.getByRole('link', { name: 'Upstreams' }).click();
  await page.getByRole('cell', { name: 'simulator' }).first().waitFor();
  await cp.shot('operator-upstreams-1280');
  expect(await unnamedControls(page)).toEqual([]);
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

test('at 390 px with ADMIN_TOKEN pasted: every view lays out without sideways scrolling; a member toggle and a take-back', async () => {
  const customer = await gw.newAccount(3);
  const cp = await openPage(chromium.browser, gw.url, 390, 844);
  const { page } = cp;
  await page.goto(`${gw.url}/console/admin`);
  await page.getByLabel('Admin token').fill('not-the-admin-token-at-all');
  await page.getByRole('button', { name: 'Use admin token' }).click();
  await page.getByText('The gateway does not accept this token.').waitFor();
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Use admin token' }).click();
  await page.getByRole('heading', { name: 'Accounts', level: 1 }).waitFor();
  expect(await scrollsSideways(page)).toBe(false);
  await cp.shot('operator-accounts-390');

  await page.goto(`${gw.url}/console/admin#/accounts/${customer.id}`);
  await page.getByRole('heading', { name: customer.id }).waitFor();
  await page.getByRole('button', { name: 'Make member' }).click();
  await page.getByRole('button', { name: 'Remove membership' }).waitFor();
  expect(await gw.api('GET', '/account', { token: customer.idToken })).toMatchObject({ body: { member: true } });
  await page.getByRole('radio', { name: 'Take back' }).check();
  await page.getByLabel('Credits', { exact: true }).fill('1.5');
  await page.getByLabel('Reason').fill('duplicate grant');
  await page.getByRole('button', { name: 'Take back credits' }).click();
  await page.getByText('Took back 1.5 credits.').waitFor();
  await expect(page.getByTestId('admin-balance').textContent()).resolves.toBe('1.5 credits');
  expect(await scrollsSideways(page)).toBe(false);
  await cp.shot('operator-account-390');

  for (const [view, name] of [
    ['Upstreams', 'upstreams'],
    ['Daily', 'daily'],
    ['Deliveries', 'deliveries'],
    ['Audit log', 'audit'],
  ] as const) {
    await page.getByRole('link', { name: view }).click();
    await page.getByRole('heading', { name: view, level: 1 }).waitFor();
    if (view === 'Audit log') await page.locator('table.audit tbody tr').first().waitFor();
    if (view === 'Daily') await page.locator('.chart canvas').waitFor();
    if (view === 'Upstreams') await page.getByRole('heading', { name: 'Routes' }).waitFor();
    expect([view, await scrollsSideways(page)]).toEqual([view, false]);
    await cp.shot(`operator-${name}-390`);
  }
  const newest = await page.locator('table.audit tbody tr').first().textContent();
  expect(newest).toContain('token');
  expect(newest).toContain('credits.take_back');
  expect(await unnamedControls(page)).toEqual([]);
  // Kept in this tab only.
  expect(await page.evaluate('localStorage.length')).toBe(0);
  // The one answer to the token it refuses (a 401 the browser reports) and nothing else.
  expect(cp.errors.filter((e) => !/status of 401/.test(e))).toEqual([]);
  await cp.context.close();
});

test('an identity not in ADMIN_SUBJECTS is told it is not an operator and signed out', async () => {
  const cp = await openPage(chromium.browser, gw.url, 1280, 900);
  const { page } = cp;
  await operatorSignIn(page, 'just-a-customer');
  await page.getByText("This identity is not an operator's").waitFor();
  await page.getByRole('button', { name: 'Use admin token' }).waitFor();
  await cp.context.close();
});
