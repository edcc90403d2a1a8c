import type { Browser } from 'playwright-core';
import { startTestGateway, type TestGateway } from '../support/gateway-harness';
import { devSignIn, withChromium, openPage, type ConsolePage } from '../support/browser';

/**
 * The console while the gateway is out of reach and after: errors go once the same request
 * succeeds again, the page says when live updates are paused, and a reconnect re-reads without
 * undoing what was loaded.
 */
let gw: TestGateway;
let browser: Browser;
const pages: ConsolePage[] = [];
beforeAll(async () => {
  [gw, browser] = await withChromium(startTestGateway({ SIMULATOR_VIDEO_SECONDS: '1' }));
});
afterAll(async () => {
  await browser?.close();
  await gw?.close();
});
afterEach(async () => {
  for (const p of pages.splice(0)) {
    // Chromium logs each request the test made fail on purpose; nothing else may be logged.
    expect(p.errors.filter((e) => !/ERR_FAILED|ERR_CONNECTION_REFUSED|WebSocket connection/.test(e))).toEqual([]);
    await p.context.close();
  }
});
const open = async () => {
  const p = await openPage(browser, gw.url);
  pages.push(p);
  return p;
};
const queueJob = (secret: string, prompt: string) =>
  gw.api('POST', '/v1/video/queue', { token: secret, body: { model: 'svc-2.5-preview-text-to-video', prompt, resolution: '480p' } });

test("Overview: 'could not be reached' while the gateway is away, gone once the balance is read again", async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct, { name: 'recovery' });
  const cp = await open();
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByTestId('balance').getByText('100 credits').waitFor();

  // HTTP calls fail; the live socket stays, so a job event asks for the balance while away.
  let down = true;
  await page.route('**/graphql', (route) => (down ? route.abort('failed') : route.continue()));
  const unreachable = page.getByRole('alert').filter({ hasText: 'The gateway could not be reached.' });
  const queued = await queueJob(key.secret, 'while away');
  expect(queued.status).toBe(200);
  await unreachable.waitFor();
  await cp.shot('overview-gateway-away');

  // Back: the job's completion is the next event, the balance is read again, and the error goes.
  down = false;
  await page.getByTestId('balance').getByText('90 credits').waitFor({ timeout: 30_000 });
  await unreachable.waitFor({ state: 'detached' });
  await cp.shot('overview-gateway-back');
  await page.unroute('**/graphql');
});
