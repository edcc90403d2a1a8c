import type { Browser } from 'playwright-core';
import { useTestGateway } from '../support/use-test-gateway';
import { devSignIn, launchChromium, openPage, type ConsolePage } from '../support/browser';
import { storedIdToken } from '../support/oidc';

/**
 * The console's development sign-in in Chromium: a token in the URL fragment counts only for a
 * sign-in this tab started (its state), so a planted link signs nobody in; the view asked for
 * before signing in is the one shown after; an unknown view is said to be so.
 */
let browser: Browser;
const pages: ConsolePage[] = [];
// Registered before the gateway's fixture, so the browser closes before the gateway.
afterAll(async () => {
  await browser?.close();
});
const gw = useTestGateway();
beforeAll(async () => {
  browser = await launchChromium();
});
afterEach(async () => {
  for (const p of pages.splice(0)) {
    expect(p.errors).toEqual([]);
    await p.context.close();
  }
});
const open = async () => {
  const p = await openPage(browser, gw.url);
  pages.push(p);
  return p;
};
const IGNORED = 'A sign-in link that this console did not start was ignored.';

test('a fragment token the console did not ask for is ignored: the signed-in session stays, a fresh tab stays signed out', async () => {
  const victim = await gw.newAccount(100);
  const attacker = await gw.newAccount(0);
  const planted = `${gw.url}/console/#id_token=${encodeURIComponent(attacker.idToken)}`;
  const cp = await open();
  const { page } = cp;
  await devSignIn(page, gw.url, victim.subject);
  await page.getByTestId('balance').getByText('100 credits').waitFor();
  const own = await storedIdToken(page);
  expect(own).not.toBeNull();

  // The link opened in the same tab (a page load): the victim's session stays, the token is out of the URL.
  await page.goto('about:blank');
  await page.goto(planted);
  await page.getByRole('status').filter({ hasText: IGNORED }).waitFor();
  expect(await storedIdToken(page)).toBe(own);
  await page.getByTestId('balance').getByText('100 credits').waitFor();
  expect(page.url()).not.toContain('id_token');
  await cp.shot('sign-in-planted-link-ignored');

  // Clicked inside the open console (a fragment change, no page load): dropped the same way.
  await page.evaluate(`location.hash = ${JSON.stringify(`#id_token=${attacker.idToken}&state=whatever-state-0000`)}`);
  await page.getByRole('status').filter({ hasText: IGNORED }).waitFor();
  expect(page.url()).not.toContain('id_token');
  expect(await storedIdToken(page)).toBe(own);

  // A new tab has no session and no sign-in of its own under way: nobody is signed in.
  const fresh = await open();
  await fresh.page.goto(planted);
  await fresh.page.getByRole('status').filter({ hasText: IGNORED }).waitFor();
  await fresh.page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(await storedIdToken(fresh.page)).toBeNull();
  expect(fresh.page.url()).not.toContain('id_token');
});

test('a sign-in under way in this tab is answered only with its own state', async () => {
  const attacker = await gw.newAccount(0);
  const { page } = await open();
  await page.goto(`${gw.url}/console/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('User name').waitFor();
  const pendingState = new URL(page.url()).searchParams.get('state');
  expect(pendingState).toMatch(/^[A-Za-z0-9_-]{22,}$/);
  // The attacker's token with the attacker's own state, while the victim's sign-in is pending.
  await page.goto(`${gw.url}/console/#id_token=${attacker.idToken}&state=AAAAAAAAAAAAAAAAAAAAAA`);
  await page.getByRole('status').filter({ hasText: IGNORED }).waitFor();
  expect(await storedIdToken(page)).toBeNull();
  // The real round trip still completes.
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('User name').fill('pending-owner');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  expect(await storedIdToken(page)).not.toBeNull();
  // A state answers one sign-in: the same fragment again is ignored.
  expect(await page.evaluate('sessionStorage.getItem("svc.console.devSignIn")')).toBeNull();
});

test('a deep link opened signed out is the view shown after signing in; a hash that names no view says so', async () => {
  const cp = await open();
  const { page } = cp;
  await page.goto(`${gw.url}/console/#/jobs`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('User name').fill('deep-link-owner');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Jobs', level: 1 }).waitFor();
  expect(new URL(page.url()).hash).toBe('#/jobs');

  await page.evaluate('location.hash = "#/nope"');
  await page.getByRole('heading', { name: 'Not found', level: 1 }).waitFor();
  await page.getByText('There is no view at #/nope.').waitFor();
  // From one unknown hash to another, the page names the one in the address bar.
  await page.evaluate('location.hash = "#/nope/again"');
  await page.getByText('There is no view at #/nope/again.').waitFor();
  await cp.shot('not-found');
  await page.getByRole('link', { name: 'Go to Overview' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
});

// A stored credential of another shape must not show the owner's navigation over an empty page
// that neither works nor signs out.
test.each(['"x"', '{"kind":"weird"}', '{"kind":"idToken"}', '{"kind":"apiKey","token":""}', 'not json'])(
  'a stored credential of the wrong shape (%s) is no session: the sign-in page shows',
  async (stored) => {
    const { page } = await open();
    await page.goto(`${gw.url}/console/`);
    await page.getByRole('button', { name: 'Use API key' }).waitFor();
    await page.evaluate(`sessionStorage.setItem('svc.console.credential', ${JSON.stringify(stored)})`);
    await page.reload();
    await page.getByRole('button', { name: 'Use API key' }).waitFor();
    expect(await page.getByRole('button', { name: 'Sign out' }).count()).toBe(0);
  },
);
