import type { ChildProcess } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { useTestGateway } from '../support/use-test-gateway';
import { freePort } from '../support/free-port';
import { launchChromium, openPage } from '../support/browser';
import { signInAtProvider, startProvider, type Seen } from '../support/oidc';

/**
 * OIDC sign-in of the console against a real OpenID provider (oidc-provider, in its own process):
 * authorization code with PKCE, the ID token then authenticates GraphQL; sign-out clears it.
 * Renewal of the ID token is console-oidc-renewal.test.ts.
 */
const CLIENT_ID = 'svc-console';
let browser: Browser;
let idp: ChildProcess;
let port: number;
const seen: Seen[] = [];

beforeAll(async () => {
  port = await freePort();
});
// Registered before the gateway's fixture, so the provider and the browser go before the gateway.
afterAll(async () => {
  idp?.kill();
  await browser?.close();
});
const gw = useTestGateway(() => ({ OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_CLIENT_ID: CLIENT_ID, OIDC_AUDIENCE: CLIENT_ID }));
beforeAll(async () => {
  browser = await launchChromium();
  idp = await startProvider(port, CLIENT_ID, `${gw.url}/console/`, seen);
});

test('sign in through the provider with authorization code and PKCE; the ID token reaches GraphQL; sign-out clears it', async () => {
  const cp = await openPage(browser, gw.url);
  const { page } = cp;
  // The development provider is not there when OIDC_ISSUER is set.
  expect((await gw.api('GET', '/dev-idp/sign-in')).status).toBe(404);
  await signInAtProvider(page, gw.url, 'oidc-user-1');
  await page.getByTestId('balance').getByText('0 credits').waitFor();
  expect(new URL(page.url()).search).toBe('');
  await cp.shot('oidc-overview');

  const auth = seen.find((s) => s.seen === 'auth');
  expect(auth).toMatchObject({ response_type: 'code', code_challenge_method: 'S256', code_challenge: true });
  expect(seen.find((s) => s.seen === 'token')).toMatchObject({ grant_type: 'authorization_code', code_verifier: true, status: 200 });

  // The account the gateway made from the provider's ID token is the one the page shows.
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByLabel('Name', { exact: true }).fill('made via oidc');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('listitem', { name: 'Key made via oidc' }).waitFor();

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(await page.evaluate('JSON.stringify(Object.keys(sessionStorage).filter((k) => k.startsWith("svc.") || k.startsWith("oidc.user")))')).toBe('[]');
  await page.reload();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

test('with OIDC configured, a token in the URL fragment is never taken, state or not', async () => {
  const cp = await openPage(browser, gw.url);
  const { page } = cp;
  await signInAtProvider(page, gw.url, 'oidc-user-2');
  const own = await page.evaluate('sessionStorage.getItem("svc.console.credential")');
  // Any other token (its validity does not matter: taking it at all would replace the stored one).
  await page.goto('about:blank');
  await page.goto(`${gw.url}/console/#id_token=planted.token.value&state=AAAAAAAAAAAAAAAAAAAAAA`);
  await page.getByRole('status').filter({ hasText: 'A sign-in link that this console did not start was ignored.' }).waitFor();
  expect(await page.evaluate('sessionStorage.getItem("svc.console.credential")')).toBe(own);
  expect(page.url()).not.toContain('id_token');
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});

test('a deep link opened signed out is the view shown after the OIDC round trip', async () => {
  const cp = await openPage(browser, gw.url);
  const { page } = cp;
  await page.goto(`${gw.url}/console/#/keys`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => !u.toString().startsWith(gw.url));
  await page.locator('input[name="login"]').fill('oidc-user-3');
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  const consent = page.getByRole('button', { name: 'Continue' });
  await Promise.race([consent.waitFor().then(() => consent.click()), page.waitForURL((u) => u.toString().startsWith(gw.url))]);
  await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
  expect(new URL(page.url()).hash).toBe('#/keys');
  expect(new URL(page.url()).search).toBe('');
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});
