import { ADMIN_TOKEN } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { devSignIn, openPage, scrollsSideways, useBrowser } from '../support/browser';

/**
 * The Overview's statement: every change of the balance, newest first, as the gateway's ledger has
 * it (grants and removals with their reasons, each call's charge with its model and key), a page
 * of 20 at a time, fitting 390 px.
 */
const chromium = useBrowser();
const gw = useTestGateway();

test('the statement lists grants, removals and charges as the ledger has them, newest first, and pages to the oldest', async () => {
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct, { name: 'statement key' });
  const charged: number[] = [];
  for (let i = 0; i < 21; i++) {
    const res = await gw.api('POST', '/v1/chat/completions', {
      token: key.secret,
      body: { model: 'svc-chat-1', messages: [{ role: 'user', content: `call ${i}` }], max_tokens: 8 },
    });
    expect(res.status).toBe(200);
    charged.push(Number(res.headers.get('x-svc-credits')));
  }
  await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: -1, reason: 'goodwill reversed' } });

  const cp = await openPage(chromium.browser, gw.url, 390, 844);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  const statement = page.getByRole('region', { name: 'Statement' });
  const rows = statement.getByRole('row');
  await rows.nth(1).waitFor();
  // A header row and the newest 20 entries: the removal first, then the charges.
  expect(await rows.count()).toBe(21);
  await expect(rows.nth(1).textContent()).resolves.toMatch(/Removed by the operator.*goodwill reversed.*−1$/);
  await expect(rows.nth(2).textContent()).resolves.toMatch(/Charge.*svc-chat-1 · statement key · chatcmpl-/);
  expect(await scrollsSideways(page)).toBe(false);
  await cp.shot('mobile-overview-statement');

  await statement.getByRole('button', { name: 'Show older entries' }).click();
  await rows.nth(23).waitFor();
  // 1 removal + 21 charges + the first grant: everything, the grant last.
  expect(await rows.count()).toBe(24);
  await expect(rows.nth(23).textContent()).resolves.toMatch(/Granted.*\+10$/);
  expect(await statement.getByRole('button', { name: 'Show older entries' }).count()).toBe(0);
  // The amounts are the ledger's: they sum to the balance shown.
  const amounts = await statement.locator('td.num').allTextContents();
  const sum = amounts.reduce((s, t) => s + Number(t.replace('−', '-').replace('+', '').replace(/,/g, '')), 0);
  expect(sum).toBeCloseTo(await gw.balance(acct), 6);
  expect(sum).toBeCloseTo(10 - 1 - charged.reduce((a, b) => a + b, 0), 6);

  // With the older entries open, new ones still arrive, on top, so the statement keeps adding
  // up to the balance beside it.
  await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 20, reason: 'top-up' } });
  const job = await gw.api('POST', '/v1/video/queue', {
    token: key.secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'a boat', resolution: '480p' },
  });
  expect(job.status).toBe(200);
  // The job's events refresh the Overview.
  await rows.nth(25).waitFor({ timeout: 20_000 });
  expect(await rows.count()).toBe(26);
  await expect(rows.nth(1).textContent()).resolves.toMatch(/Charge.*svc-2\.5-preview-text-to-video.*−10$/);
  await expect(rows.nth(2).textContent()).resolves.toMatch(/Granted.*top-up.*\+20$/);
  await expect(rows.nth(25).textContent()).resolves.toMatch(/Granted.*\+10$/);
  const after = (await statement.locator('td.num').allTextContents()).reduce((s, t) => s + Number(t.replace('−', '-').replace('+', '').replace(/,/g, '')), 0);
  expect(after).toBeCloseTo(await gw.balance(acct), 6);
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});
