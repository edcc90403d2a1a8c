/**
 * The console's Jobs view on running jobs, in headless Chromium: a progress bar that moves as the
 * simulator's clock does, and a Cancel button (with a confirmation step) that ends the job FAILED,
 * refunded, without a reload; at 1280 and 390 px. The simulator takes 40 s here, so the jobs run
 * while the page is watched.
 */
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';
import { devSignIn, openPage, scrollsSideways, unnamedControls, type ConsolePage, useBrowser } from '../support/browser';

const chromium = useBrowser();
const pages: ConsolePage[] = [];
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '40' });
afterEach(() => {
  for (const p of pages.splice(0)) expect(p.errors).toEqual([]);
});

async function runningJob(secret: string, prompt: string): Promise<string> {
  const queued = await gw.api('POST', '/v1/video/queue', {
    token: secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt, duration: '5s', resolution: '480p' },
  });
  expect(queued.status).toBe(200);
  return queued.body.id as string;
}

test.each([
  [1280, 900],
  [390, 844],
])('at %i px a running job shows a moving progress bar, and Cancel (confirmed) ends it FAILED and refunded', async (width, height) => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct);
  const cp = await openPage(chromium.browser, gw.url, width, height);
  pages.push(cp);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Jobs' }).click();
  const jobId = await runningJob(key.secret, `a slow tide at ${width} px`);
  const card = page.locator(`li[data-job-id="${jobId}"]`);
  await card.getByText('PROCESSING', { exact: true }).waitFor();

  const bar = card.getByRole('progressbar', { name: `Progress of job ${jobId}` });
  await bar.waitFor();
  const progress = async () => Number(await bar.getAttribute('value'));
  const first = await progress();
  // 40 s a job: 5% is two seconds, read again by the page every two.
  const moved = await pollUntil(progress, (p) => p >= first + 5, 30_000, 200);
  expect(moved).toBeLessThan(100);
  await card.getByText(`${moved}%`).waitFor();
  expect(await scrollsSideways(page)).toBe(false);
  expect(await unnamedControls(page)).toEqual([]);
  await cp.shot(`jobs-running-${width}`);

  // The confirmation step can be left: the job keeps running.
  await card.getByRole('button', { name: 'Cancel job' }).click();
  await card.getByRole('button', { name: 'Keep it running' }).click();
  expect(await card.getByTestId('job-status').textContent()).toBe('PROCESSING');
  await card.getByRole('button', { name: 'Cancel job' }).click();
  await cp.shot(`jobs-cancel-confirm-${width}`);
  await card.getByRole('button', { name: 'Cancel it (refunds 10 credits)' }).click();
  await card.getByText('FAILED', { exact: true }).waitFor();
  await card.getByText('Failed: cancelled. Refunded 10 credits.').waitFor();
  expect(await card.getByRole('progressbar').count()).toBe(0);
  expect(await card.getByRole('button', { name: 'Cancel job' }).count()).toBe(0);
  expect(await gw.balance(acct)).toBe(100);
  expect((await gw.api('POST', '/v1/video/retrieve', { token: key.secret, body: { id: jobId } })).body).toEqual({
    id: jobId,
    status: 'FAILED',
    reason: 'cancelled',
  });
  expect(await scrollsSideways(page)).toBe(false);
  await cp.shot(`jobs-cancelled-${width}`);
});
