import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';
import {
  SCREENSHOTS,
  devSignIn,
  firstRenderMs,
  openPage,
  scrollsSideways,
  unnamedControls,
  videoPlays,
  type ConsolePage,
  useBrowser,
} from '../support/browser';

/** The web console in headless Chromium against a real gateway (dev identity provider). */
const chromium = useBrowser();
const pages: ConsolePage[] = [];
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '1' });
afterEach(() => {
  // No console errors on any page of the gateway, in any test.
  for (const p of pages.splice(0)) expect(p.errors).toEqual([]);
});
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const open = async (width?: number, height?: number) => {
  const p = await openPage(chromium.browser, gw.url, width, height);
  pages.push(p);
  return p;
};

test('dev sign-in, create a test key (secret shown once), queue a video from the page, watch it complete, play it, revoke the key', async () => {
  const cp = await open();
  const { page } = cp;
  await devSignIn(page, gw.url, 'browser-owner');
  expect(new URL(page.url()).pathname).toBe('/console/');
  expect(page.url()).not.toContain('id_token');
  const firstRender = await firstRenderMs(page);
  writeFileSync(join(SCREENSHOTS, 'first-render.json'), JSON.stringify({ firstRenderMs: firstRender }, null, 2));
  await cp.shot('overview');

  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByLabel('Name', { exact: true }).fill('browser test key');
  await page.getByLabel('Test (simulator, free)').check();
  await page.getByRole('button', { name: 'Create key' }).click();
  const secretBox = page.getByLabel('New key secret', { exact: true });
  const secret = await secretBox.inputValue();
  expect(secret).toMatch(/^svc_test_[A-Za-z0-9_]+$/);
  const card = page.getByRole('listitem', { name: 'Key browser test key' });
  await card.waitFor();
  await cp.shot('keys-secret-once');
  await page.getByRole('button', { name: 'Done' }).click();
  // Shown once: gone from the page, and the key list never carries it.
  expect(await page.content()).not.toContain(secret);

  await page.getByRole('link', { name: 'Jobs' }).click();
  expect(await page.getByLabel('API key for queueing').inputValue()).toBe(secret);
  await page.getByLabel('Prompt').fill('a paper boat drifting on a river');
  await page.getByLabel('Resolution').selectOption('480p');
  await page.getByRole('button', { name: 'Get quote' }).click();
  await page.getByRole('status').filter({ hasText: 'Quote: 10 credits' }).waitFor();
  const sent = page.waitForRequest((r) => r.url().endsWith('/graphql') && (r.postData() ?? '').includes('queueVideo'));
  await page.getByRole('button', { name: 'Queue video' }).click();
  // Every queueing mutation carries an idempotency key (see the motion-control test for what it does).
  expect((await sent).postDataJSON().variables.idempotencyKey).toMatch(UUID);
  const job = page.locator('li[data-job-id]').first();
  await job.getByText('PROCESSING', { exact: true }).waitFor();
  // A test key's job moves no credit, and says so.
  await job.getByText(/test key, free \(10 credits with a live key\)/).waitFor();
  const jobId = await job.getAttribute('data-job-id');
  expect(jobId).toMatch(/^vid_/);
  // No reload: the subscription turns it COMPLETED, and the video element loads the MP4.
  await job.getByText('COMPLETED', { exact: true }).waitFor({ timeout: 30_000 });
  await job.getByLabel(`Video of job ${jobId}`).waitFor();
  expect(await videoPlays(page, jobId!)).toBeGreaterThan(0);
  await cp.shot('jobs-completed');

  await page.getByRole('link', { name: 'Keys' }).click();
  await card.getByRole('button', { name: 'Revoke' }).click();
  await card.getByRole('button', { name: 'Confirm revoke' }).click();
  await card.waitFor({ state: 'detached' });
  expect((await gw.api('POST', '/v1/video/quote', { token: secret, body: { model: 'svc-2.5-preview-text-to-video' } })).status).toBe(401);
});

test('motion control from the page: the quote is the REST one, a refusal names its field, a double click queues one job, a retry after a lost answer the same one', async () => {
  const acct = await gw.newAccount();
  const cp = await open();
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Keys' }).click();
  await page.getByLabel('Name', { exact: true }).fill('motion key');
  await page.getByLabel('Test (simulator, free)').check();
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = await page.getByLabel('New key secret', { exact: true }).inputValue();
  await page.getByRole('button', { name: 'Done' }).click();

  // Every queueMotionControl the page sends is seen here; one may be held (the button stays
  // disabled meanwhile) or have its answer lost (the gateway queues it, the page gets a network error).
  const mutations: Array<{ idempotencyKey: string; input: Record<string, unknown> }> = [];
  let hold: Promise<void> | null = null;
  let loseAnswer = false;
  await page.route('**/graphql', async (route) => {
    const body = route.request().postDataJSON() as { query?: string; variables?: any } | null;
    if (!body?.query?.includes('queueMotionControl')) return route.continue();
    mutations.push(body.variables);
    if (hold) await hold;
    if (!loseAnswer) return route.continue();
    loseAnswer = false;
    await route.fetch();
    return route.abort('failed');
  });
  const jobsOfAccount = async () => {
    const q = '{ videoJobs(first: 50) { edges { node { id model status } } } }';
    const res = await gw.api('GET', '/graphql?query=' + encodeURIComponent(q), { token: acct.idToken });
    return (res.body.data.videoJobs.edges as Array<{ node: { id: string; model: string; status: string } }>).map((e) => e.node);
  };
  const restQuote = async (seconds: number) => {
    const res = await gw.api('POST', '/v1/video/quote', { token: secret, body: { model: 'svc-v3-motion-control', duration_seconds: seconds } });
    expect(res.status).toBe(200);
    return res.body.credits as number;
  };
  const quoteShown = page.getByRole('status').filter({ hasText: 'Quote:' });
  const submit = page.getByRole('button', { name: 'Queue motion control' });

  await page.getByRole('link', { name: 'Jobs' }).click();
  await page.getByText('No jobs yet.').waitFor();
  await page.getByRole('radio', { name: 'Motion control' }).check();
  // A loopback image URL first: the gateway refuses it, naming the field, and queues nothing.
  await page.getByLabel('Image URL').fill('http://127.0.0.1/character.png');
  await page.getByLabel('Video URL').fill('https://93.184.216.34/dance.mp4');
  await page.getByLabel('Duration (seconds').fill('7');
  await page.getByLabel('Character orientation').selectOption({ label: 'As in the video' });
  await page.getByLabel('Keep original sound').check();
  expect(await submit.isDisabled()).toBe(true);
  // A duration that is not whole seconds is said in words (sent, it came back as the GraphQL
  // engine's "Int cannot represent non-integer value"); Enter before a quote asks for one.
  await page.getByLabel('Duration (seconds').fill('2.5');
  await page.getByLabel('Duration (seconds').press('Enter');
  await page.getByRole('alert').filter({ hasText: 'The duration is a whole number of seconds, 1 to 30.' }).waitFor();
  expect(await quoteShown.count()).toBe(0);
  await page.getByLabel('Duration (seconds').fill('7');
  await page.getByLabel('Duration (seconds').press('Enter');
  await quoteShown.waitFor();
  await page.getByRole('button', { name: 'Get quote' }).click();
  await quoteShown.waitFor();
  expect(await quoteShown.locator('strong').textContent()).toBe(`${await restQuote(7)} credits`);
  await submit.click();
  await page.getByRole('alert').filter({ hasText: '(imageUrl)' }).waitFor();
  await cp.shot('jobs-motion-refused');
  expect(mutations).toHaveLength(1);
  expect(await jobsOfAccount()).toEqual([]);
  // A refusal leaves no job under its key (the gateway would answer the stored refusal to that key
  // for 24 hours), so sending the same again takes a new key.
  await submit.click();
  await pollUntil(
    async () => mutations.length,
    (n) => n > 1,
    5_000,
    20,
  );
  await page.getByRole('alert').filter({ hasText: '(imageUrl)' }).waitFor();
  expect(mutations).toHaveLength(2);
  expect(mutations[1].idempotencyKey).not.toBe(mutations[0].idempotencyKey);

  // The quote depends on the duration only, so it still holds. Two clicks in one task, before the
  // page can re-render: one request, one job; the button is disabled while the request is in flight.
  await page.getByLabel('Image URL').fill('https://93.184.216.34/character.png');
  let release!: () => void;
  hold = new Promise<void>((r) => (release = r));
  await page.evaluate(`(() => {
    const b = [...document.querySelectorAll('button[type=submit]')].find((e) => e.textContent.includes('Queue motion control'));
    b.click();
    b.click();
  })()`);
  await pollUntil(
    async () => mutations.length,
    (n) => n > 2,
    5_000,
    20,
  );
  // A request the page sends after the clicks: once it is seen, so is any the second click sent.
  const after = page.waitForRequest((r) => r.url().endsWith('/healthz?after-the-clicks'));
  await page.evaluate(`void fetch('/healthz?after-the-clicks')`);
  await after;
  expect(await submit.isDisabled()).toBe(true);
  expect(mutations).toHaveLength(3);
  expect(mutations[2]).toEqual({
    idempotencyKey: expect.stringMatching(UUID),
    input: {
      imageUrl: 'https://93.184.216.34/character.png',
      videoUrl: 'https://93.184.216.34/dance.mp4',
      durationSeconds: 7,
      prompt: null,
      keepOriginalSound: true,
      characterOrientation: 'VIDEO',
    },
  });
  // Other values, another intended job: another key.
  expect(mutations[2].idempotencyKey).not.toBe(mutations[1].idempotencyKey);
  hold = null;
  release();
  const first = page.locator('li[data-job-id]').first();
  await first.getByText('PROCESSING', { exact: true }).waitFor();
  const firstId = await first.getAttribute('data-job-id');
  expect(firstId).toMatch(/^vid_/);
  await first.getByText('svc-v3-motion-control', { exact: false }).waitFor();
  await first.getByText('COMPLETED', { exact: true }).waitFor({ timeout: 30_000 });
  expect((await jobsOfAccount()).map((j) => j.id)).toEqual([firstId]);

  // New values: the quote for 7 s is gone; a new quote, then the answer to the first attempt is lost.
  await page.getByLabel('Duration (seconds').fill('3');
  expect(await quoteShown.count()).toBe(0);
  await page.getByRole('button', { name: 'Get quote' }).click();
  await quoteShown.waitFor();
  expect(await quoteShown.locator('strong').textContent()).toBe(`${await restQuote(3)} credits`);
  loseAnswer = true;
  await submit.click();
  await page.getByRole('alert').filter({ hasText: 'The gateway could not be reached.' }).waitFor();
  // Chromium logs the aborted request itself: the one console error this step causes on purpose.
  const abortedLog = cp.errors.findIndex((e) => /ERR_FAILED/.test(e));
  if (abortedLog >= 0) cp.errors.splice(abortedLog, 1);
  // The retry sends the same key, so the gateway answers the job it queued the first time.
  await submit.click();
  await quoteShown.waitFor({ state: 'detached' });
  const jobs = await jobsOfAccount();
  expect(jobs).toHaveLength(2);
  expect(jobs.every((j) => j.model === 'svc-v3-motion-control')).toBe(true);
  expect(mutations).toHaveLength(5);
  expect(mutations[4].idempotencyKey).toBe(mutations[3].idempotencyKey);
  expect(mutations[3].idempotencyKey).not.toBe(mutations[2].idempotencyKey);
  expect(mutations[3].input.durationSeconds).toBe(3);
  const second = page.locator(`li[data-job-id="${jobs[0].id}"]`);
  await second.getByText('COMPLETED', { exact: true }).waitFor({ timeout: 30_000 });
  expect(await page.locator('li[data-job-id]').count()).toBe(2);
  await cp.shot('jobs-motion-completed');
  await page.unroute('**/graphql');

  await page.setViewportSize({ width: 390, height: 844 });
  expect(await scrollsSideways(page)).toBe(false);
  expect(await unnamedControls(page)).toEqual([]);
  await cp.shot('mobile-jobs-motion');
});

test('a job queued with curl appears in the open page by itself, and the balance and usage follow', async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct, { name: 'curl key' });
  const cp = await open();
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByText('100 credits', { exact: true }).waitFor();
  await page.getByRole('link', { name: 'Jobs' }).click();
  await page.getByText('No jobs yet.').waitFor();

  const { stdout } = await promisify(execFile)('curl', [
    '-s',
    `${gw.url}/v1/video/queue`,
    '-H',
    `Authorization: Bearer ${key.secret}`,
    '-H',
    'Content-Type: application/json',
    '-d',
    JSON.stringify({ model: 'svc-2.5-preview-text-to-video', prompt: 'a kite over the dunes', duration: '5s', resolution: '720p' }),
  ]);
  const queued = JSON.parse(stdout) as { id: string };
  const card = page.locator(`li[data-job-id="${queued.id}"]`);
  await card.waitFor();
  await card.getByText('COMPLETED', { exact: true }).waitFor({ timeout: 30_000 });

  // A failed job shows its reason and its refund.
  const failed = await gw.api('POST', '/v1/video/queue', {
    token: key.secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'a storm [fail]', resolution: '480p' },
  });
  const failedCard = page.locator(`li[data-job-id="${failed.body.id}"]`);
  await failedCard.getByText('FAILED', { exact: true }).waitFor({ timeout: 30_000 });
  await failedCard.getByText(/Failed: .+\. Refunded 10 credits\./).waitFor();
  await cp.shot('jobs-live-curl-and-failed');

  await page.getByRole('link', { name: 'Overview' }).click();
  await page.getByTestId('balance').getByText('85 credits').waitFor();
  await page.getByLabel('Split by').selectOption('KEY');
  await page.locator('.u-legend').getByText('curl key').waitFor();
  await cp.shot('overview-usage-by-key');
});

test('at 390 px every view fits without horizontal scroll; a pasted API key sees only jobs and models', async () => {
  const acct = await gw.newAccount(50);
  const key = await gw.newKey(acct, { name: 'a key with a rather long name to test wrapping on small screens' });
  const cp = await open(390, 844);
  const { page } = cp;
  await page.goto(`${gw.url}/console/`);
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  writeFileSync(join(SCREENSHOTS, 'first-render-signed-out.json'), JSON.stringify({ firstRenderMs: await firstRenderMs(page) }, null, 2));
  expect(await scrollsSideways(page)).toBe(false);
  expect(await unnamedControls(page)).toEqual([]);
  await cp.shot('mobile-sign-in');

  await devSignIn(page, gw.url, acct.subject);
  for (const view of ['Overview', 'Activity', 'Purchases', 'Keys', 'Jobs', 'Models', 'Settings']) {
    await page.getByRole('link', { name: view }).click();
    await page.getByRole('heading', { name: view, level: 1 }).waitFor();
    await page.waitForLoadState('networkidle');
    if (view === 'Keys') await page.getByRole('listitem', { name: `Key ${'a key with a rather long name to test wrapping on small screens'}` }).waitFor();
    if (view === 'Models') await page.getByText('svc-chat-1').first().waitFor();
    expect({ view, sideways: await scrollsSideways(page), unnamed: await unnamedControls(page) }).toEqual({ view, sideways: false, unnamed: [] });
    await cp.shot(`mobile-${view.toLowerCase()}`);
  }
  await page.getByRole('button', { name: 'Sign out' }).click();

  await page.getByLabel('API key', { exact: true }).fill(key.secret);
  await page.getByRole('button', { name: 'Use API key' }).click();
  await page.getByRole('heading', { name: 'Jobs', level: 1 }).waitFor();
  const nav = page.getByRole('navigation', { name: 'Views' });
  expect(await nav.getByRole('link').allTextContents()).toEqual(['Jobs', 'Models']);
  await page.getByRole('button', { name: 'Get quote' }).click();
  await page.getByRole('status').filter({ hasText: 'Quote: 15 credits' }).waitFor();
  expect(await scrollsSideways(page)).toBe(false);
  await cp.shot('mobile-api-key-jobs');

  // A key revoked elsewhere: the gateway closes the key's live socket (4403) and the console signs
  // out by itself, saying why; had it no socket open, its next call would be refused (401) instead.
  await gw.api('DELETE', `/account/api-keys/${key.id}`, { token: acct.idToken });
  const signedOut = page.getByRole('alert').filter({ hasText: 'no longer accepts this sign-in' });
  const byItself = await signedOut.waitFor({ timeout: 3_000 }).then(
    () => true,
    () => false,
  );
  if (!byItself) {
    await page.getByRole('button', { name: 'Get quote' }).click();
    await signedOut.waitFor();
  }
  await page.getByRole('button', { name: 'Use API key' }).waitFor();
  // Chromium logs a refused request (401) itself: the one console error this step may cause on purpose.
  const refusedLog = cp.errors.findIndex((e) => /status of 401/.test(e));
  if (!byItself) expect(refusedLog).toBeGreaterThanOrEqual(0);
  if (refusedLog >= 0) cp.errors.splice(refusedLog, 1);
});

test('jobs are paged: twenty, then the rest with "Load more jobs", newest first', async () => {
  const acct = await gw.newAccount();
  const ids: string[] = [];
  // Video requests are limited to 5 a minute per key: five test keys queue five jobs each.
  for (let k = 0; k < 5; k++) {
    const key = await gw.newKey(acct, { mode: 'test', name: `pager ${k}` });
    for (let j = 0; j < 5; j++) {
      const res = await gw.api('POST', '/v1/video/queue', {
        token: key.secret,
        body: { model: 'svc-2.5-preview-text-to-video', prompt: `job ${k}.${j}`, resolution: '480p' },
      });
      expect(res.status).toBe(200);
      ids.push(res.body.id);
    }
  }
  // Let every job finish first: a job changing state while the page is open arrives live and is
  // added to the list, which is right, but is not what this test counts.
  await pollUntil(
    () =>
      gw.api('GET', '/graphql?query=' + encodeURIComponent('{ videoJobs(first: 30, status: PROCESSING) { edges { node { id } } } }'), { token: acct.idToken }),
    (r) => r.body?.data?.videoJobs?.edges?.length === 0,
    30_000,
    200,
  );
  const cp = await open();
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Jobs' }).click();
  const cards = page.locator('li[data-job-id]');
  await page.getByRole('button', { name: 'Load more jobs' }).waitFor();
  expect(await cards.count()).toBe(20);
  await page.getByRole('button', { name: 'Load more jobs' }).click();
  await page.getByRole('button', { name: 'Load more jobs' }).waitFor({ state: 'detached' });
  expect(await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-job-id')))).toEqual([...ids].reverse());
});
