/**
 * The Settings view and Overview's alert notice, against a webhook receiver on a socket that
 * verifies every signature: a low-balance threshold and the account webhook set in the page (its
 * secret shown once); spending below the threshold sends balance.low, signed with that secret;
 * Overview says an alert fired, linking to Settings, whose delivery list shows the event, its
 * type, status and attempt; once seen there, the notice goes. Then the secret is regenerated, the
 * webhook removed and the threshold cleared, each as the gateway then stores it.
 */
import { useTestGateway } from '../support/use-test-gateway';
import { devSignIn, openPage, scrollsSideways, unnamedControls, useBrowser } from '../support/browser';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { allCallsBilled } from '../support/billed';
import { pollUntil } from '../support/poll';

const chromium = useBrowser();
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
// Registered before the gateway's fixture, so the browser and the receiver close before the gateway.
afterAll(async () => {
  await receiver?.close();
});
const gw = useTestGateway({ WEBHOOK_ALLOW_LOCAL: '1' });

/** One image of a creative model: 1 credit. */
const image = (secret: string) =>
  gw.api('POST', '/v1/images/generations', { token: secret, body: { model: 'svc-creative-v8', prompt: 'a lighthouse', size: '1024x1024' } });

test('threshold and account webhook set in the page; balance.low reaches the receiver, shows in the deliveries and as a notice on Overview until seen', async () => {
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct, { name: 'spender' });
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  const account = async () => (await gw.api('GET', '/account', { token: acct.idToken })).body;

  const threshold = page.getByLabel('Alert below (credits; empty: no alert)');
  await threshold.fill('0x10');
  await page.getByRole('button', { name: 'Save threshold' }).click();
  await page
    .getByRole('form', { name: 'Low-balance alert' })
    .getByRole('alert')
    .filter({ hasText: 'The low-balance threshold is a number of credits' })
    .waitFor();
  expect((await account()).lowBalanceAlert).toBeNull();
  await threshold.fill('8.5');
  await page.getByRole('button', { name: 'Save threshold' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved: an alert when the balance falls below 8.5 credits.' }).waitFor();
  expect((await account()).lowBalanceAlert).toBe(8.5);

  const hook = page.getByRole('region', { name: 'Account webhook' });
  await hook.getByText('No deliveries yet.').waitFor();
  await hook.getByLabel('Webhook URL (https)').fill(receiver.url);
  await hook.getByRole('button', { name: 'Save webhook' }).click();
  const secret = await hook.getByLabel('Webhook secret of the account', { exact: true }).inputValue();
  expect(secret).toMatch(/^whsec_/);
  receiver.verifyWith([secret]);
  expect((await account()).webhook).toEqual({ url: receiver.url });
  await cp.shot('settings-1280');

  // 10 → 8: below 8.5 once.
  for (let i = 0; i < 2; i++) expect((await image(key.secret)).status).toBe(200);
  await allCallsBilled(gw, acct.id);
  const [event] = await pollUntil(
    async () => receiver.received.filter((e) => e.body.type === 'balance.low'),
    (events) => events.length === 1,
    15_000,
    100,
  );
  expect(event.verifiedWith).toBe(secret);
  expect(event.headers['x-svc-event']).toBe('balance.low');
  expect(event.body.data).toMatchObject({ balance: 8, lowBalanceAlert: 8.5 });
  // The delivery is logged in the transaction after the receiver answered: the notice reads the log.
  await pollUntil(
    async () => (await gw.api('GET', '/account/webhook/deliveries', { token: acct.idToken })).body.data.length,
    (n) => n === 1,
    5_000,
    50,
  );

  await page.getByRole('link', { name: 'Overview' }).click();
  const notice = page.getByTestId('alert-notice');
  await notice.getByText('balance.low').waitFor();
  expect(await notice.textContent()).toContain('An alert fired: balance.low at');
  await cp.shot('overview-alert-notice-1280');
  await notice.getByRole('link', { name: 'See them in Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  const log = page.getByRole('list', { name: 'Webhook deliveries of the account' });
  await log.getByText(event.body.id).waitFor();
  expect(await log.textContent()).toContain(`${event.body.id} · balance.low · attempt 1 · 200`);
  await cp.shot('settings-deliveries-1280');

  // Seen: Overview no longer says it, in this page or a new one of this browser profile.
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByTestId('balance').getByText('8 credits').waitFor();
  await page.waitForLoadState('networkidle');
  expect(await notice.count()).toBe(0);

  await page.getByRole('link', { name: 'Settings' }).click();
  await hook.getByRole('button', { name: 'Regenerate secret' }).click();
  await hook.getByRole('button', { name: /^Confirm regenerate/ }).click();
  const regenerated = hook.getByLabel('Webhook secret of the account', { exact: true });
  const second = await pollUntil(
    () => regenerated.inputValue(),
    (shown) => shown !== secret,
    5_000,
    100,
  );
  expect(second).toMatch(/^whsec_/);
  await hook.getByRole('button', { name: 'Done' }).click();
  await hook.getByRole('button', { name: 'Clear webhook' }).click();
  await hook.getByRole('button', { name: 'Confirm clear webhook' }).click();
  await pollUntil(
    async () => (await account()).webhook,
    (w) => w === null,
    5_000,
    50,
  );
  await hook.getByText('Now: none').waitFor();
  await page.getByRole('button', { name: 'Clear threshold' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved: no low-balance alert.' }).waitFor();
  expect((await account()).lowBalanceAlert).toBeNull();
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

test('at 390 px Settings and the Overview notice fit without horizontal scroll, every control named', async () => {
  const acct = await gw.newAccount(3);
  const key = await gw.newKey(acct);
  await gw.api('PATCH', '/account', { token: acct.idToken, body: { lowBalanceAlert: 2.5 } });
  const set = await gw.api('PATCH', '/account/webhook', { token: acct.idToken, body: { url: receiver.url } });
  receiver.verifyWith([set.body.secret]);
  expect((await image(key.secret)).status).toBe(200);
  await allCallsBilled(gw, acct.id);
  await pollUntil(
    async () => (await gw.api('GET', '/account/webhook/deliveries', { token: acct.idToken })).body.data.length,
    (n) => n === 1,
    15_000,
    100,
  );
  const cp = await openPage(chromium.browser, gw.url, 390, 844);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByTestId('alert-notice').getByText('balance.low').waitFor();
  expect({ sideways: await scrollsSideways(page), unnamed: await unnamedControls(page) }).toEqual({ sideways: false, unnamed: [] });
  await cp.shot('overview-alert-notice-390');
  await page.getByRole('link', { name: 'Settings' }).first().click();
  await page.getByRole('list', { name: 'Webhook deliveries of the account' }).getByText('balance.low').waitFor();
  expect({ sideways: await scrollsSideways(page), unnamed: await unnamedControls(page) }).toEqual({ sideways: false, unnamed: [] });
  await cp.shot('settings-390');
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});
