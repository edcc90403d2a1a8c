/**
 * A key's budgets per period in the Keys view: a week budget set in the edit panel is what the
 * gateway stores; billed calls made with the key show on its card as spent, with a bar and the
 * time the week starts again (Monday 00:00 UTC), as the key record says; a budget that is not a
 * plain amount is refused naming the field, and nothing is saved.
 */
import { periodEnd } from '../../src/domain/credits/budgets';
import { useTestGateway } from '../support/use-test-gateway';
import { devSignIn, openPage, scrollsSideways, useBrowser } from '../support/browser';
import { allCallsBilled } from '../support/billed';
import { pollUntil } from '../support/poll';

const chromium = useBrowser();
const gw = useTestGateway();

/** flux-dev: 3 credits an image, served by the simulator for live keys too. */
const image = (secret: string) =>
  gw.api('POST', '/v1/images/generations', { token: secret, body: { model: 'flux-dev', prompt: 'a lighthouse', size: '64x64' } });

test('a week budget set in the form; billed calls show on the card as spent, with a bar and the reset time', async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct, { name: 'budgeted' });
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();
  const card = page.getByRole('listitem', { name: 'Key budgeted' });
  expect(await card.getByRole('list', { name: 'Budgets of budgeted' }).count()).toBe(0);

  await card.getByRole('button', { name: 'Edit' }).click();
  const week = card.getByLabel('Weekly budget (credits, from Monday; empty: none)');
  await week.fill('1e3');
  await card.getByRole('button', { name: 'Save' }).click();
  await card.getByRole('alert').filter({ hasText: 'The weekly budget is a number of credits' }).waitFor();
  const record = async () => (await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body.data.find((k: { id: string }) => k.id === key.id);
  expect((await record()).budgets).toEqual([]);

  await week.fill('50');
  await card.getByRole('button', { name: 'Save' }).click();
  await card.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  expect((await record()).budgets).toEqual([{ period: 'week', credits: 50, spent: 0, resetsAt: expect.any(String) }]);
  expect((await record()).dailySpendCap).toBeNull();

  for (let i = 0; i < 3; i++) expect((await image(key.secret)).status).toBe(200);
  await allCallsBilled(gw, acct.id);
  const stored = await pollUntil(record, (k) => k.budgets[0]?.spent === 9, 5_000, 50);
  const resetsAt = periodEnd('week', new Date()).toISOString();
  expect(stored.budgets).toEqual([{ period: 'week', credits: 50, spent: 9, resetsAt }]);

  // The card reads the keys again when the view opens.
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByRole('link', { name: 'Keys' }).click();
  const budgets = page.getByRole('listitem', { name: 'Key budgeted' }).getByRole('list', { name: 'Budgets of budgeted' });
  const weekRow = budgets.locator('li[data-period="WEEK"]');
  await weekRow.getByText('9 of 50 credits').waitFor();
  expect(await weekRow.getByText('This week').count()).toBe(1);
  expect(await weekRow.locator('time').getAttribute('datetime')).toBe(resetsAt);
  expect(await weekRow.locator('time').textContent()).toBe(new Date(resetsAt).toLocaleString('en-GB', { timeZone: 'UTC' }) + ' UTC');
  expect(Number(await weekRow.locator('progress').getAttribute('value'))).toBeCloseTo(9 / 50, 6);
  expect(await weekRow.getByRole('progressbar').getAttribute('aria-label')).toBe('This week: 18% of the budget spent');
  await cp.shot('keys-budgets-1280');

  // The form shows what is stored; the day's budget is the daily cap.
  await page.getByRole('listitem', { name: 'Key budgeted' }).getByRole('button', { name: 'Edit' }).click();
  const edit = page.getByRole('listitem', { name: 'Key budgeted' });
  expect(await edit.getByLabel('Weekly budget (credits, from Monday; empty: none)').inputValue()).toBe('50');
  await edit.getByLabel('Daily spend cap (credits; empty: none)').fill('20');
  await edit.getByLabel('Monthly budget (credits, from the 1st; empty: none)').fill('150.5');
  await edit.getByRole('button', { name: 'Save' }).click();
  await edit.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const three = await record();
  expect(three.dailySpendCap).toBe(20);
  expect(three.budgets.map((b: { period: string; credits: number; spent: number }) => [b.period, b.credits, b.spent])).toEqual([
    ['day', 20, 9],
    ['week', 50, 9],
    ['month', 150.5, 9],
  ]);
  await budgets.locator('li[data-period="MONTH"]').getByText('9 of 150.5 credits').waitFor();
  await budgets.locator('li[data-period="DAY"]').getByText('9 of 20 credits').waitFor();
  expect(cp.errors).toEqual([]);
  await cp.context.close();

  const mobile = await openPage(chromium.browser, gw.url, 390, 844);
  await devSignIn(mobile.page, gw.url, acct.subject);
  await mobile.page.getByRole('link', { name: 'Keys' }).click();
  const small = mobile.page.getByRole('listitem', { name: 'Key budgeted' });
  await small.getByRole('list', { name: 'Budgets of budgeted' }).locator('li[data-period="WEEK"]').getByText('9 of 50 credits').waitFor();
  await small.getByRole('button', { name: 'Edit' }).click();
  expect(await scrollsSideways(mobile.page)).toBe(false);
  await mobile.shot('keys-budgets-390');
  expect(mobile.errors).toEqual([]);
  await mobile.context.close();
});
