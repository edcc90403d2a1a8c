import { useTestGateway } from '../support/use-test-gateway';
import { devSignIn, openPage, type ConsolePage, useBrowser } from '../support/browser';
import { pollUntil } from '../support/poll';

/**
 * The console while the gateway is out of reach and after: errors go once the same request
 * succeeds again, the page says when live updates are paused, and a reconnect re-reads without
 * undoing what was loaded.
 */
const chromium = useBrowser();
const pages: ConsolePage[] = [];
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '1' });
afterEach(async () => {
  for (const p of pages.splice(0)) {
    // Chromium logs each request the test made fail on purpose; nothing else may be logged.
    expect(p.errors.filter((e) => !/ERR_FAILED|ERR_CONNECTION_REFUSED|WebSocket connection/.test(e))).toEqual([]);
    await p.context.close();
  }
});
const open = async () => {
  const p = await openPage(chromium.browser, gw.url);
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

// Opened while the gateway is away, the Overview says so, and must not go on saying "Loading…"
// under the chart and the statement, which nothing is loading.
test('Overview opened while the gateway is away: the message says so, and no "Loading…" stays under it', async () => {
  const acct = await gw.newAccount(5);
  const cp = await open();
  const { page } = cp;
  await page.route('**/graphql', (route) => route.abort('failed'));
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('alert').filter({ hasText: 'The gateway could not be reached.' }).waitFor();
  await pollUntil(
    () => page.getByText('Loading…').count(),
    (n) => n === 0,
    10_000,
    50,
  );
  await page.unroute('**/graphql');
  const aborted = cp.errors.filter((e) => /ERR_FAILED/.test(e));
  cp.errors.splice(0, cp.errors.length, ...cp.errors.filter((e) => !aborted.includes(e)));
});

/** The page's live sockets, routed through the test: `drop()` closes them as a gateway going away does, and refuses new ones until `restore()`. */
async function routeLiveSocket(page: ConsolePage['page']) {
  let down = false;
  const open: Array<{ close(o?: { code?: number; reason?: string }): Promise<void> }> = [];
  await page.routeWebSocket(/\/graphql$/, (ws) => {
    if (down) return void ws.close({ code: 1001, reason: 'Going away' });
    ws.connectToServer();
    open.push(ws);
  });
  return {
    connections: () => open.length,
    drop: async () => {
      down = true;
      for (const ws of open.splice(0)) await ws.close({ code: 1001, reason: 'Going away' }).catch(() => undefined);
    },
    restore: () => {
      down = false;
    },
  };
}

test('while the live socket is down the page says so, and stops saying it once reconnected', async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct, { name: 'live status', mode: 'test' });
  const cp = await open();
  const { page } = cp;
  const socket = await routeLiveSocket(page);
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Jobs' }).click();
  await page.getByText('No jobs yet.').waitFor();
  const paused = page.getByRole('status').filter({ hasText: 'Live updates paused — reconnecting…' });
  expect(await paused.count()).toBe(0);

  await socket.drop();
  await paused.waitFor();
  await cp.shot('jobs-live-paused');
  // A job queued meanwhile is not seen live; the reconnection reads it (as the page always did).
  const queued = await queueJob(key.secret, 'while the socket is down');
  expect(queued.status).toBe(200);

  socket.restore();
  await paused.waitFor({ state: 'detached', timeout: 30_000 });
  await page.locator(`li[data-job-id="${queued.body.id}"]`).waitFor();
});

test('Jobs reads its first page once on opening; after a reconnection every loaded job stays and "Load more jobs" does not come back', async () => {
  const acct = await gw.newAccount();
  // Video requests are limited to 5 a minute per key: five test keys queue five jobs each.
  for (let k = 0; k < 5; k++) {
    const key = await gw.newKey(acct, { mode: 'test', name: `pager ${k}` });
    for (let j = 0; j < 5; j++) expect((await queueJob(key.secret, `job ${k}.${j}`)).status).toBe(200);
  }
  const cp = await open();
  const { page } = cp;
  const socket = await routeLiveSocket(page);
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Jobs' }).click();
  const loadMore = page.getByRole('button', { name: 'Load more jobs' });
  await loadMore.waitFor();
  // Opened as the first view (a reload of #/jobs), while its socket is still connecting.
  const firstPageReads: number[] = [];
  page.on('request', (r) => {
    const body = r.url().endsWith('/graphql') ? (r.postDataJSON() as { query?: string; variables?: { after?: string | null; status?: string } } | null) : null;
    // The list's first page: not a later page, and not the progress poll of jobs still processing.
    if (body?.query?.includes('query VideoJobs') && !body.variables?.after && !body.variables?.status) firstPageReads.push(Date.now());
  });
  await page.reload();
  await loadMore.waitFor();
  await page.waitForLoadState('networkidle');
  expect(firstPageReads).toHaveLength(1);
  await loadMore.click();
  await loadMore.waitFor({ state: 'detached' });
  const cards = page.locator('li[data-job-id]');
  expect(await cards.count()).toBe(25);

  const before = socket.connections();
  await socket.drop();
  socket.restore();
  // The reconnection reads the first page again (its jobs may have changed meanwhile)...
  await pollUntil(
    async () => firstPageReads.length,
    (n) => n >= 2,
    30_000,
    100,
  );
  expect(firstPageReads).toHaveLength(2);
  expect(socket.connections()).toBeGreaterThan(0);
  expect(before).toBeGreaterThan(0);
  await page.waitForLoadState('networkidle');
  // ...and merges it: nothing loaded is lost, and nothing more is offered.
  expect(await cards.count()).toBe(25);
  expect(await loadMore.count()).toBe(0);
});
