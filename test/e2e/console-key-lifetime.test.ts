/**
 * A key's lifetime in the Keys view, checked against what the gateway then stores and answers: an
 * expiry set on create, shown on the card, cleared in the edit panel; a rotation with a grace in
 * seconds (24 hours unless changed) whose new secret is shown once, the card naming when the old
 * secret stops; both secrets answering /v1/models until the grace ends, then only the new. The
 * gateway keeps time on a fake clock the test steps; the browser's clock is set to it when the
 * card must judge a moment that has passed.
 */
import { fakeClock } from '../support/fake-clock';
import { useTestGateway } from '../support/use-test-gateway';
import { devSignIn, openPage, scrollsSideways, unnamedControls, useBrowser } from '../support/browser';

const chromium = useBrowser();
const clock = fakeClock();
const gw = useTestGateway({ WORKER_CONCURRENCY: '0' }, { clock });

const models = (secret: string) => gw.api('GET', '/v1/models', { token: secret });
/** A moment as a datetime-local field takes it, in UTC, to the minute. */
const fieldText = (ms: number) => new Date(ms).toISOString().slice(0, 16);
const storedKey = async (idToken: string, name: string) =>
  (await gw.api('GET', '/account/api-keys', { token: idToken })).body.data.find((k: { name: string }) => k.name === name);
/** The card's fact `term` (a <dt>), as its <dd> reads. */
const fact = (card: import('playwright-core').Locator, term: string) =>
  card.locator('dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]');

test('an expiry set on create shows on the card and is cleared in the edit panel; an expiry passed shows as expired', async () => {
  const acct = await gw.newAccount(10);
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();

  // Ten days and an hour ahead, to the minute: "in 10 days" whatever the seconds.
  const expiresMs = Math.floor((clock.now() + 10 * 86_400_000 + 3_600_000) / 60_000) * 60_000;
  await page.getByLabel('Name', { exact: true }).fill('ci runner');
  await page.getByRole('region', { name: 'New key' }).getByLabel('Expires at (UTC; empty: never)').fill(fieldText(expiresMs));
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByLabel('New key secret', { exact: true }).waitFor();
  await page.getByRole('button', { name: 'Done' }).click();
  expect((await storedKey(acct.idToken, 'ci runner')).expiresAt).toBe(new Date(expiresMs).toISOString());
  const card = page.getByRole('listitem', { name: 'Key ci runner' });
  await fact(card, 'Expires')
    .getByText(/\(expires in 10 days\)$/)
    .waitFor();
  await cp.shot('keys-expiry-1280');

  await card.getByRole('button', { name: 'Edit' }).click();
  const expiryField = card.getByLabel('Expires at (UTC; empty: never)');
  expect(await expiryField.inputValue()).toBe(fieldText(expiresMs));
  await card.getByRole('button', { name: 'Never expires' }).click();
  expect(await expiryField.inputValue()).toBe('');
  await card.getByRole('button', { name: 'Save' }).click();
  await card.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  await fact(card, 'Expires').getByText('never', { exact: true }).waitFor();
  expect((await storedKey(acct.idToken, 'ci runner')).expiresAt).toBeNull();

  // Set again in the edit panel, 30 minutes ahead; then the gateway's clock (and the page's) passes it.
  const soonMs = Math.floor((clock.now() + 30 * 60_000) / 60_000) * 60_000 + 60_000;
  await expiryField.fill(fieldText(soonMs));
  await card.getByRole('button', { name: 'Save' }).click();
  await card.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
  const key = await storedKey(acct.idToken, 'ci runner');
  expect(key.expiresAt).toBe(new Date(soonMs).toISOString());
  clock.stepWall(soonMs - clock.now() + 1_000);
  await page.clock.setFixedTime(new Date(clock.now()));
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByRole('link', { name: 'Keys' }).click();
  await fact(page.getByRole('listitem', { name: 'Key ci runner' }), 'Expires')
    .getByText(/^expired /)
    .waitFor();
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

test('rotate: 24 hours by default; a grace of 90 seconds keeps the old secret answering until it ends, then only the new one; at 390 px the card fits', async () => {
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct, { name: 'rotating' });
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();
  const card = page.getByRole('listitem', { name: 'Key rotating' });
  expect(await card.locator('dt', { hasText: /^Rotated$/ }).count()).toBe(0);

  await card.getByRole('button', { name: 'Rotate' }).click();
  const grace = card.getByLabel('Grace', { exact: true });
  const unit = card.getByLabel('Grace unit');
  expect([await grace.inputValue(), await unit.inputValue()]).toEqual(['24', 'hours']);
  // Past a week is refused before anything is sent.
  await grace.fill('169');
  await card.getByRole('button', { name: 'Rotate secret' }).click();
  await card.getByRole('alert').filter({ hasText: 'up to a week' }).waitFor();
  expect((await storedKey(acct.idToken, 'rotating')).rotatedAt).toBeNull();

  await grace.fill('90');
  await unit.selectOption('seconds');
  const rotatedAtMs = clock.now();
  await card.getByRole('button', { name: 'Rotate secret' }).click();
  const shown = card.getByLabel('New secret of rotating', { exact: true });
  const secret = await shown.inputValue();
  expect(secret).toMatch(new RegExp(`^${key.id}_`));
  expect(secret).not.toBe(key.secret);
  const stored = await storedKey(acct.idToken, 'rotating');
  expect(stored).toMatchObject({ rotatedAt: new Date(rotatedAtMs).toISOString(), previousSecretUntil: new Date(rotatedAtMs + 90_000).toISOString() });
  const until = new Date(rotatedAtMs + 90_000).toLocaleString('en-GB', { timeZone: 'UTC' }) + ' UTC';
  await card
    .getByRole('status')
    .filter({ hasText: `The old secret works until ${until}.` })
    .waitFor();
  await fact(card, 'Old secret').getByText(`works until ${until}`).waitFor();
  await fact(card, 'Rotated')
    .getByText(new Date(rotatedAtMs).toLocaleString('en-GB', { timeZone: 'UTC' }) + ' UTC')
    .waitFor();
  await cp.shot('keys-rotated-1280');

  // Both answer during the grace; from its end only the new one.
  expect([(await models(key.secret)).status, (await models(secret)).status]).toEqual([200, 200]);
  clock.stepWall(89_000);
  expect((await models(key.secret)).status).toBe(200);
  clock.stepWall(1_000);
  const refused = await models(key.secret);
  expect(refused.status).toBe(401);
  expect(refused.body.error).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' });
  expect((await models(secret)).status).toBe(200);

  // The secret box goes with Done; the card says the old secret stopped once the page's clock has passed it too.
  await card.getByRole('button', { name: 'Done' }).click();
  expect(await card.locator('.secret').count()).toBe(0);
  await page.clock.setFixedTime(new Date(clock.now()));
  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByRole('link', { name: 'Keys' }).click();
  await fact(page.getByRole('listitem', { name: 'Key rotating' }), 'Old secret')
    .getByText(`stopped ${until}`)
    .waitFor();
  expect(JSON.stringify((await gw.api('GET', '/account/api-keys', { token: acct.idToken })).body)).not.toContain(secret);
  expect(cp.errors).toEqual([]);
  await cp.context.close();

  const mobile = await openPage(chromium.browser, gw.url, 390, 844);
  await devSignIn(mobile.page, gw.url, acct.subject);
  await mobile.page.getByRole('link', { name: 'Keys' }).click();
  const small = mobile.page.getByRole('listitem', { name: 'Key rotating' });
  await small.getByRole('button', { name: 'Rotate' }).click();
  await small.getByRole('button', { name: 'Rotate secret' }).waitFor();
  expect({ sideways: await scrollsSideways(mobile.page), unnamed: await unnamedControls(mobile.page) }).toEqual({ sideways: false, unnamed: [] });
  await mobile.shot('keys-rotate-390');
  await small.getByRole('button', { name: 'Edit' }).click();
  await small.getByLabel('Expires at (UTC; empty: never)').waitFor();
  expect({ sideways: await scrollsSideways(mobile.page), unnamed: await unnamedControls(mobile.page) }).toEqual({ sideways: false, unnamed: [] });
  await mobile.shot('keys-edit-390');
  expect(mobile.errors).toEqual([]);
  await mobile.context.close();
});
