import { useTestGateway } from '../support/use-test-gateway';
import { devSignIn, openPage, useBrowser } from '../support/browser';
import { startWebhookReceiver } from '../support/webhook-receiver';
import { pollUntil } from '../support/poll';

/** The Keys view's edit and webhook panels, checked against what the gateway then stores and does. */
const chromium = useBrowser();
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '0.5', WEBHOOK_ALLOW_LOCAL: '1' });
afterAll(async () => {
  await receiver?.close();
});

test('edit name, permissions and cap; set a webhook (secret shown once), read its delivery log, regenerate, clear', async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct, { name: 'hooked' });
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();
  const card = page.getByRole('listitem', { name: 'Key hooked' });

  await card.getByRole('button', { name: 'Edit' }).click();
  await card.getByLabel('Name').fill('hooked and capped');
  await card.getByLabel('Allowed models (none: all)').selectOption(['svc-2.5-preview-text-to-video', 'svc-chat-1']);
  await card.getByLabel('Daily spend cap (credits; empty: none)').fill('40');
  await card.getByRole('button', { name: 'Save' }).click();
  const edited = page.getByRole('listitem', { name: 'Key hooked and capped' });
  await edited.getByText('svc-chat-1, svc-2.5-preview-text-to-video').waitFor();
  const stored = (await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data[0];
  expect(stored).toMatchObject({ name: 'hooked and capped', allowedModels: ['svc-chat-1', 'svc-2.5-preview-text-to-video'], dailySpendCap: 40 });

  await edited.getByRole('button', { name: 'Webhook' }).click();
  await edited.getByLabel('Webhook URL (https)').fill(receiver.url);
  await edited.getByRole('button', { name: 'Save webhook' }).click();
  const secret = await edited.getByLabel('Webhook secret of hooked and capped', { exact: true }).inputValue();
  expect(secret).toMatch(/^whsec_|.{20,}/);
  receiver.verifyWith([secret]);
  await cp.shot('keys-webhook-secret');

  const queued = await gw.api('POST', '/v1/video/queue', {
    token: key.secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'a lantern', resolution: '480p' },
  });
  expect(queued.status).toBe(200);
  await edited.getByRole('button', { name: 'Show delivery log' }).click();
  const log = edited.getByRole('list', { name: 'Webhook deliveries of hooked and capped' });
  // Read again until the delivery is in it.
  await pollUntil(
    async () => {
      const shown = await log.getByText(`wh_${queued.body.id}_completed`).count();
      if (!shown) await edited.getByRole('button', { name: /delivery log/ }).click();
      return shown;
    },
    (shown) => shown > 0,
    10_000,
    200,
  );
  await log.getByText(`wh_${queued.body.id}_completed`).waitFor();
  await expect(log.textContent()).resolves.toContain('attempt 1 · 200');
  expect(receiver.received.at(-1)?.verifiedWith).toBe(secret);
  await cp.shot('keys-delivery-log');

  // Both take a second step, as Revoke does: the old secret stops working, the webhook goes.
  await edited.getByRole('button', { name: 'Regenerate secret' }).click();
  await edited.getByRole('button', { name: /^Confirm regenerate/ }).click();
  const regenerated = edited.getByLabel('Webhook secret of hooked and capped', { exact: true });
  // Polled from here: a string predicate of waitForFunction is evaluated in the page, which the
  // console's CSP (no unsafe-eval) refuses once Playwright has to poll it (a slow machine).
  await pollUntil(
    () => regenerated.inputValue(),
    (shown) => shown !== secret,
    5_000,
    100,
  );

  await edited.getByRole('button', { name: 'Clear webhook' }).click();
  await edited.getByRole('button', { name: 'Confirm clear webhook' }).click();
  const webhookFact = edited.locator('dt', { hasText: /^Webhook$/ }).locator('xpath=following-sibling::dd[1]');
  await webhookFact.getByText('none', { exact: true }).waitFor();
  expect((await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data[0].webhook).toBeNull();
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

test('a value longer than the gateway takes is refused with its message, never cut and saved: a 2,100-character webhook URL, a 101-character key name', async () => {
  const acct = await gw.newAccount(100);
  await gw.newKey(acct, { name: 'long values' });
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();
  const card = page.getByRole('listitem', { name: 'Key long values' });

  const longUrl = `https://example.com/${'a'.repeat(2100 - 'https://example.com/'.length)}`;
  expect(longUrl).toHaveLength(2100);
  await card.getByRole('button', { name: 'Webhook' }).click();
  const urlInput = card.getByLabel('Webhook URL (https)');
  await urlInput.fill(longUrl);
  expect(await urlInput.inputValue()).toBe(longUrl);
  await card.getByRole('button', { name: 'Save webhook' }).click();
  await card.getByRole('alert').filter({ hasText: /url/i }).waitFor();
  await cp.shot('keys-webhook-url-too-long');
  expect(await card.locator('.secret').count()).toBe(0);
  expect((await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data[0].webhook).toBeNull();

  const longName = 'n'.repeat(101);
  await page.getByLabel('Name', { exact: true }).fill(longName);
  expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe(longName);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('region', { name: 'New key' }).getByRole('alert').filter({ hasText: /name/ }).waitFor();
  expect((await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data).toHaveLength(1);
  // Chromium logs nothing for a GraphQL refusal (HTTP 200 with errors), so the page's log stays empty.
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

test('a refusal does not outlive its cause: "at most 10 active API keys" goes once a key is revoked', async () => {
  const acct = await gw.newAccount(0);
  for (let i = 0; i < 10; i++) await gw.newKey(acct, { name: `full ${i}` });
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByRole('heading', { name: 'Active keys (10 of 10)' }).waitFor();
  await page.getByLabel('Name', { exact: true }).fill('one too many');
  await page.getByRole('button', { name: 'Create key' }).click();
  const limit = page.getByRole('alert').filter({ hasText: 'at most 10 active API keys' });
  await limit.waitFor();
  const card = page.getByRole('listitem', { name: 'Key full 0' });
  await card.getByRole('button', { name: 'Revoke' }).click();
  await card.getByRole('button', { name: 'Confirm revoke' }).click();
  await page.getByRole('heading', { name: 'Active keys (9 of 10)' }).waitFor();
  await limit.waitFor({ state: 'detached' });
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

test('the daily cap: a disabled field is not read (a test key is created whatever it holds); only plain decimals are taken', async () => {
  const acct = await gw.newAccount(0);
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();
  const capField = page.getByLabel('Daily spend cap (credits, live keys)');
  const stored = async () =>
    (await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data as Array<{ name: string; dailySpendCap: number | null }>;

  await page.getByLabel('Name', { exact: true }).fill('test despite abc');
  await capField.fill('abc');
  await page.getByLabel('Test (simulator, free)').check();
  expect(await capField.isDisabled()).toBe(true);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByLabel('New key secret', { exact: true }).waitFor();
  expect((await stored()).map((k) => k.name)).toEqual(['test despite abc']);
  await page.getByRole('button', { name: 'Done' }).click();

  await page.getByLabel('Live', { exact: true }).check();
  await page.getByLabel('Name', { exact: true }).fill('odd caps');
  const refusal = page.getByRole('region', { name: 'New key' }).getByRole('alert').filter({ hasText: 'The daily cap is a number of credits' });
  // 400 digits were Infinity to Number(), sent as null: "no cap". Seven decimals were rounded before the gateway could refuse them.
  for (const odd of ['0x10', '1e3', 'Infinity', '-5', '1,5', `1${'0'.repeat(400)}`, '0.30000000000000001', '0', '1000000000.5']) {
    await capField.fill(odd);
    await page.getByRole('button', { name: 'Create key' }).click();
    await refusal.waitFor();
  }
  expect(await stored()).toHaveLength(1);
  await capField.fill('2.5');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('listitem', { name: 'Key odd caps' }).waitFor();
  expect((await stored()).find((k) => k.name === 'odd caps')?.dailySpendCap).toBe(2.5);
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

test('the edit panel: a cap of 400 digits is refused and the cap kept; a blank name is refused, not saved as the old one; a double click issues one webhook secret; a revoked key leaves the Jobs form', async () => {
  const acct = await gw.newAccount(10);
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  const setWebhooks: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/graphql') && (r.postData() ?? '').includes('mutation SetWebhook')) setWebhooks.push(r.postData()!);
  });
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByLabel('Name', { exact: true }).fill('capped');
  await page.getByLabel('Daily spend cap (credits, live keys)').fill('50');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByLabel('New key secret', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Done' }).click();
  const stored = async () =>
    (await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data[0] as { name: string; dailySpendCap: number | null; webhook: unknown };
  const card = page.getByRole('listitem', { name: 'Key capped' });

  await card.getByRole('button', { name: 'Edit' }).click();
  await card.getByLabel('Daily spend cap (credits; empty: none)').fill(`1${'0'.repeat(400)}`);
  await card.getByRole('button', { name: 'Save' }).click();
  await card.getByRole('alert').filter({ hasText: 'The daily cap is a number of credits' }).waitFor();
  await card.getByLabel('Daily spend cap (credits; empty: none)').fill('50');
  await card.getByLabel('Name').fill('   ');
  await card.getByRole('button', { name: 'Save' }).click();
  await card.getByRole('alert').filter({ hasText: 'A key needs a name' }).waitFor();
  expect(await card.getByRole('status').filter({ hasText: 'Saved.' }).count()).toBe(0);
  expect(await stored()).toMatchObject({ name: 'capped', dailySpendCap: 50 });

  await card.getByRole('button', { name: 'Webhook' }).click();
  await card.getByLabel('Webhook URL (https)').fill(receiver.url);
  await card.getByRole('button', { name: 'Save webhook' }).dblclick();
  const secret = await card.getByLabel('Webhook secret of capped', { exact: true }).inputValue();
  await pageSentAll(page);
  expect(setWebhooks).toHaveLength(1);
  expect(secret.length).toBeGreaterThan(20);

  // The Jobs form queues with the key created in this tab; once it is revoked, the form forgets it.
  await page.getByRole('link', { name: 'Jobs' }).click();
  const keyField = page.getByLabel('API key for queueing');
  expect(await keyField.inputValue()).toMatch(/^svc_live_/);
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByRole('listitem', { name: 'Key capped' }).getByRole('button', { name: 'Revoke' }).click();
  await page.getByRole('button', { name: /Confirm revoke/ }).click();
  await page.getByText('No keys yet.').waitFor();
  await page.getByRole('link', { name: 'Jobs' }).click();
  expect(await page.getByLabel('API key for queueing').inputValue()).toBe('');
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

/** Until a request the page sends now has been seen: any request it sent before has been seen too. */
async function pageSentAll(page: import('playwright-core').Page): Promise<void> {
  const marker = `/healthz?marker=${Math.random().toString(36).slice(2)}`;
  const seen = page.waitForRequest((r) => r.url().endsWith(marker));
  await page.evaluate(`void fetch(${JSON.stringify(marker)})`);
  await seen;
}

/** `read()` once it answers `expected` (focus and title change in effects, after the render); the wait fails naming what it read last. */
const settled = (read: () => Promise<string>, expected: string): Promise<string> => pollUntil(read, (now) => now === expected, 5_000, 50);
/** What has the keyboard focus: its id, or its tag and text. */
const focused = (page: import('playwright-core').Page, expected: string) =>
  settled(() => page.evaluate('(() => { const e = document.activeElement; return e.id || `${e.tagName}:${e.textContent.trim().slice(0, 60)}`; })()'), expected);
const titled = (page: import('playwright-core').Page, expected: string) => settled(() => page.title(), expected);

test('keyboard and screen reader: the new secret takes focus, Done goes to the form, Revoke focuses its confirmation, Escape cancels, a revoke focuses the list; each view names the page', async () => {
  const acct = await gw.newAccount(0);
  await gw.newKey(acct, { name: 'kept' });
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  expect(await titled(page, 'Overview · svc console')).toBe('Overview · svc console');
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
  expect(await titled(page, 'Keys · svc console')).toBe('Keys · svc console');

  await page.getByLabel('Name', { exact: true }).fill('focus key');
  await page.getByLabel('Name', { exact: true }).press('Enter');
  await page.getByLabel('New key secret', { exact: true }).waitFor();
  expect(await focused(page, 'secret-new-key-secret')).toBe('secret-new-key-secret');
  await cp.shot('keys-secret-focused');
  await page.getByRole('button', { name: 'Done' }).press('Enter');
  expect(await focused(page, 'key-name')).toBe('key-name');

  const card = page.getByRole('listitem', { name: 'Key focus key' });
  await card.getByRole('button', { name: 'Revoke' }).press('Enter');
  expect(await focused(page, 'BUTTON:Confirm revoke')).toBe('BUTTON:Confirm revoke');
  await page.keyboard.press('Escape');
  await card.getByRole('button', { name: 'Confirm revoke' }).waitFor({ state: 'detached' });
  expect(await focused(page, 'BUTTON:Revoke')).toBe('BUTTON:Revoke');
  await page.keyboard.press('Enter');
  expect(await focused(page, 'BUTTON:Confirm revoke')).toBe('BUTTON:Confirm revoke');
  await page.keyboard.press('Enter');
  await card.waitFor({ state: 'detached' });
  expect(await focused(page, 'keys-heading')).toBe('keys-heading');
  expect(await page.locator('#keys-heading').textContent()).toBe('Active keys (1 of 10)');

  // The webhook's Save says what saving does to the secret; Clear asks first, Escape keeps it.
  const kept = page.getByRole('listitem', { name: 'Key kept' });
  await kept.getByRole('button', { name: 'Webhook' }).click();
  await kept.getByText('Saving issues a signing secret, shown once.').waitFor();
  await kept.getByLabel('Webhook URL (https)').fill('https://93.184.216.34/hooks');
  await kept.getByRole('button', { name: 'Save webhook' }).click();
  await kept.getByLabel('Webhook secret of kept', { exact: true }).waitFor();
  expect(await focused(page, 'secret-webhook-secret-of-kept')).toBe('secret-webhook-secret-of-kept');
  await kept.getByRole('button', { name: 'Done' }).click();
  await kept.getByText('Saving issues a new signing secret, shown once: the current one stops working.').waitFor();
  await kept.getByRole('button', { name: 'Clear webhook' }).click();
  expect(await focused(page, 'BUTTON:Confirm clear webhook')).toBe('BUTTON:Confirm clear webhook');
  await page.keyboard.press('Escape');
  expect(await focused(page, 'BUTTON:Clear webhook')).toBe('BUTTON:Clear webhook');
  expect((await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data[0].webhook).not.toBeNull();
  await cp.shot('keys-webhook-hint');

  for (const [view, title] of [
    ['Jobs', 'Jobs · svc console'],
    ['Models', 'Models · svc console'],
  ]) {
    await page.getByRole('link', { name: view }).click();
    await page.getByRole('heading', { name: view, level: 1 }).waitFor();
    expect(await titled(page, title)).toBe(title);
  }
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Use API key' }).waitFor();
  expect(await titled(page, 'Sign in · svc console')).toBe('Sign in · svc console');
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

// The Keys view, opened by a reload or a #/keys link, must not put focus on the first key's
// Revoke (the first confirm button to render would find focus on <body> and take it), where two
// presses of Enter would revoke a key nobody had chosen.
test('opening the Keys view puts no destructive button under the keyboard: Enter twice after a reload revokes nothing', async () => {
  const acct = await gw.newAccount(0);
  for (const name of ['first', 'second']) await gw.newKey(acct, { name });
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByRole('listitem', { name: 'Key first' }).waitFor();
  await page.reload();
  await page.getByRole('listitem', { name: 'Key first' }).waitFor();
  // Every effect of the first renders run before looking: the page's reads are over, and two frames painted.
  await page.waitForLoadState('networkidle');
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(undefined))))');
  const active = await page.evaluate('(() => { const e = document.activeElement; return `${e.tagName}:${(e.textContent || "").trim().slice(0, 40)}`; })()');
  expect(active).not.toMatch(/Revoke|Clear webhook|Regenerate/);
  const mutations: string[] = [];
  page.on('request', (r) => r.url().endsWith('/graphql') && (r.postData() ?? '').includes('mutation') && mutations.push(r.postData()!));
  await page.keyboard.press('Enter');
  await page.keyboard.press('Enter');
  await pageSentAll(page);
  expect(mutations).toEqual([]);
  expect((await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data).toHaveLength(2);
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});
