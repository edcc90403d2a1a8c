import type { ChildProcess } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { useTestGateway } from '../support/use-test-gateway';
import { freePort } from '../support/free-port';
import { launchChromium, openPage } from '../support/browser';
import { pollUntil } from '../support/poll';
import { recordWire } from '../support/page-wire';
import { claimsOf, signInAtProvider, startProvider, storedIdToken, storedRefreshToken, type Seen } from '../support/oidc';

/**
 * Silent renewal of the console's OIDC ID token against a real provider (oidc-provider, its own
 * process) minting 5-second ID tokens: refresh token grant with rotation, no redirect, the page
 * kept; a call the gateway refuses meanwhile goes again with the new token; a renewal the provider
 * refuses signs out once, saying why. The gateway accepts a token up to LEEWAY seconds past its
 * exp, so each test stays until the gateway refuses the first token: only renewal can keep the page
 * working.
 */
const CLIENT_ID = 'svc-console';
const TTL = 5;
const LEEWAY = 5;
let browser: Browser;
let idp: ChildProcess;
let port: number;
let issuer: string;
const seen: Seen[] = [];

beforeAll(async () => {
  port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
});
// Registered before the gateway's fixture, so the provider and the browser go before the gateway.
afterAll(async () => {
  idp?.kill();
  await browser?.close();
});
const gw = useTestGateway(() => ({
  OIDC_ISSUER: issuer,
  OIDC_CLIENT_ID: CLIENT_ID,
  OIDC_AUDIENCE: CLIENT_ID,
  OIDC_CLOCK_TOLERANCE_SECONDS: String(LEEWAY),
  SIMULATOR_VIDEO_SECONDS: '2',
}));
beforeAll(async () => {
  browser = await launchChromium();
  idp = await startProvider(port, CLIENT_ID, `${gw.url}/console/`, seen, { ID_TOKEN_TTL: String(TTL) });
});

const gatewayStatus = async (token: string) => (await gw.api('GET', '/graphql?query=' + encodeURIComponent('{ account { id } }'), { token })).status;
/** Until the gateway refuses `token` (its exp plus the gateway's leeway); answers when that was seen. */
const untilRefused = async (token: string) => {
  expect(
    await pollUntil(
      () => gatewayStatus(token),
      (s) => s === 401,
      60_000,
      1_000,
    ),
  ).toBe(401);
  return Date.now();
};
const refreshes = (from: number) => seen.slice(from).filter((s) => s.seen === 'token' && s.grant_type === 'refresh_token');
const signInKeys = 'JSON.stringify(Object.keys(sessionStorage).filter((k) => k.startsWith("svc.") || k.startsWith("oidc.user")))';

async function createKey(page: Page, name: string, test = false): Promise<void> {
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByLabel('Name', { exact: true }).fill(name);
  if (test) await page.getByLabel('Test (simulator, free)').check();
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('listitem', { name: `Key ${name}` }).waitFor();
  await page.getByRole('button', { name: 'Done' }).click();
}

test('the ID token is renewed with the refresh token before it expires: no redirect, the page keeps its state, GraphQL and the live socket use the new token', async () => {
  const from = seen.length;
  const cp = await openPage(browser, gw.url);
  const { page } = cp;
  const wire = recordWire(page);
  await signInAtProvider(page, gw.url, 'renewal-user');
  const first = (await storedIdToken(page))!;
  const firstRefresh = await storedRefreshToken(page);
  expect(firstRefresh).toBeTruthy();
  expect(seen.slice(from).find((s) => s.seen === 'auth')).toMatchObject({ scope: 'openid offline_access' });
  const claims = claimsOf(first);
  expect((claims.exp as number) - (claims.iat as number)).toBe(TTL);

  // A test key to queue with (free), then a prompt typed and not sent: state a redirect or a reload would lose.
  await createKey(page, 'renewal key', true);
  await page.getByRole('link', { name: 'Jobs' }).click();
  await page.getByLabel('Prompt').fill('a lighthouse in the fog');
  await page.evaluate('window.__sameDocument = true');

  const refusedAt = await untilRefused(first);
  const renewed = (await storedIdToken(page))!;
  expect(renewed).not.toBe(first);
  expect(claimsOf(renewed).sub).toBe(claims.sub);
  expect(await gatewayStatus(renewed)).toBe(200);
  // Renewed ahead of expiry at least once a lifetime over the span the first token was accepted;
  // each answer carried a new refresh token (rotation).
  expect(refreshes(from).length).toBeGreaterThanOrEqual(Math.floor((TTL + LEEWAY) / TTL));
  expect(refreshes(from).every((r) => r.status === 200 && r.refresh_token === true)).toBe(true);
  expect(await storedRefreshToken(page)).not.toBe(firstRefresh);
  // The same document, the typed prompt still there, and no trip to the provider since sign-in.
  expect(await page.evaluate('window.__sameDocument')).toBe(true);
  expect(await page.getByLabel('Prompt').inputValue()).toBe('a lighthouse in the fog');
  expect(seen.slice(from).filter((s) => s.seen === 'auth')).toHaveLength(1);

  // Queue with the key; the job turns COMPLETED through the subscription, on a socket the console
  // opened with a renewed token (it reconnects on each renewal).
  await page.getByRole('button', { name: 'Get quote' }).click();
  await page.getByRole('status').filter({ hasText: 'Quote:' }).waitFor();
  await page.getByRole('button', { name: 'Queue video' }).click();
  const job = page.locator('li[data-job-id]').first();
  await job.getByText('PROCESSING', { exact: true }).waitFor();
  const jobId = (await job.getAttribute('data-job-id'))!;
  await job.getByText('COMPLETED', { exact: true }).waitFor({ timeout: 30_000 });
  const carried = wire.sockets.filter((s) => s.received.some((f) => f.includes('"type":"next"') && f.includes(jobId)));
  expect(carried.length).toBeGreaterThan(0);
  expect(carried.every((s) => s.token !== null && s.token !== first && s.received.some((f) => f.includes('connection_ack')))).toBe(true);

  // What only the owner's ID token may do, well after the first one lapsed.
  await createKey(page, 'made after renewal');
  const owners = wire.graphql.filter((g) => !g.token.startsWith('svc_'));
  expect(owners.filter((g) => g.status !== 200)).toEqual([]);
  expect(owners.filter((g) => g.at > refusedAt && g.token === first)).toEqual([]);
  expect(owners.filter((g) => g.at > refusedAt).length).toBeGreaterThan(0);
  expect(await page.getByRole('button', { name: 'Sign in' }).count()).toBe(0);
  expect(cp.errors).toEqual([]);

  // Sign-out revokes the refresh token at the provider and forgets every token.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(seen.slice(from).filter((s) => s.seen === 'revocation')).toEqual([{ seen: 'revocation', token_type_hint: 'refresh_token', status: 200 }]);
  expect(await page.evaluate(signInKeys)).toBe('[]');
  await cp.context.close();
}, 120_000);

test('a call the gateway refuses before a renewal got through (the provider was out of reach) waits for one and is sent once more; the socket then connects with it', async () => {
  const from = seen.length;
  const cp = await openPage(browser, gw.url);
  const { page } = cp;
  const wire = recordWire(page);
  // Refresh requests fail as a network error would (the code exchange of the sign-in passes), until
  // the gateway has refused a call: its 401 reaches the page only once they may pass again.
  let providerReachable = false;
  await page.route(`${issuer}/token`, (route) =>
    !providerReachable && (route.request().postData() ?? '').includes('grant_type=refresh_token') ? route.abort('failed') : route.continue(),
  );
  await page.route('**/graphql', async (route) => {
    const res = await route.fetch();
    if (res.status() === 401) providerReachable = true;
    await route.fulfill({ response: res });
  });
  await signInAtProvider(page, gw.url, 'unreachable-user');
  const first = (await storedIdToken(page))!;
  // Keys: nothing polls and no socket is open while the first token lapses.
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByRole('button', { name: 'Create key' }).waitFor();
  await untilRefused(first);
  expect(await storedIdToken(page)).toBe(first);
  expect(refreshes(from)).toEqual([]);

  // A mutation: refused for its credential (nothing ran), sent again with the renewed token, one key made.
  await createKey(page, 'made after a refusal');
  const renewed = (await storedIdToken(page))!;
  expect(renewed).not.toBe(first);
  expect(await gatewayStatus(renewed)).toBe(200);
  const calls = wire.graphql.map((g) => ({ status: g.status, renewed: g.token !== first }));
  const refusal = calls.findIndex((c) => c.status === 401);
  expect(calls.slice(refusal, refusal + 2)).toEqual([
    { status: 401, renewed: false },
    { status: 200, renewed: true },
  ]);
  expect(calls.filter((c) => c.status === 401)).toHaveLength(1);
  expect(await page.getByRole('listitem', { name: 'Key made after a refusal' }).count()).toBe(1);

  // The Jobs view's socket connects with the renewed token.
  await page.getByRole('link', { name: 'Jobs' }).click();
  await page.getByText('No jobs yet.').waitFor();
  const acked = () => wire.sockets.some((s) => s.token !== null && s.token !== first && s.received.some((f) => f.includes('connection_ack')));
  expect(await pollUntil(async () => acked(), Boolean, 10_000)).toBe(true);
  expect(await page.getByRole('alert').count()).toBe(0);
  // Chromium logs the refused call (401) and the refresh requests cut off on purpose itself.
  expect(cp.errors.filter((e) => !/status of 401|net::ERR_FAILED/.test(e))).toEqual([]);
  await cp.context.close();
}, 120_000);

test('when the provider session ends, the next renewal is refused: the console signs out once, saying why, and asks nothing more of the provider', async () => {
  const from = seen.length;
  const cp = await openPage(browser, gw.url);
  const { page } = cp;
  await signInAtProvider(page, gw.url, 'ended-user');
  await page.getByTestId('balance').getByText('0 credits').waitFor();

  // Signed out at the provider in another tab: it revokes the grant, refresh token included.
  const other = await cp.context.newPage();
  await other.goto(`${issuer}/session/end`);
  await other.getByRole('button', { name: 'Yes, sign me out' }).click();
  await other.waitForURL(/\/session\/end\/success/);
  await other.close();

  const message = page.getByRole('alert').filter({ hasText: 'ended at the identity provider' });
  await message.waitFor({ timeout: (TTL + 5) * 1000 });
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  expect(await page.evaluate(signInKeys)).toBe('[]');
  // Refreshes before the provider's sign-out went through; the one after it was refused, and the console tried no other.
  expect(refreshes(from).filter((r) => r.status !== 200)).toEqual([expect.objectContaining({ status: 400, error: 'invalid_grant' })]);

  // No loop: two more lifetimes on the sign-in page bring no request to the provider.
  const requests = seen.length;
  await page.waitForTimeout(2 * TTL * 1000);
  expect(seen.length).toBe(requests);
  expect(await message.isVisible()).toBe(true);
  expect(page.url().startsWith(`${gw.url}/console/`)).toBe(true);
  // Chromium logs the refused refresh (400) itself: the one console error this test causes on purpose.
  expect(cp.errors.filter((e) => !/status of 400/.test(e))).toEqual([]);
  await cp.context.close();
}, 60_000);
