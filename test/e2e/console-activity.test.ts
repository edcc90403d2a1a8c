/**
 * The Activity view against the request log the gateway wrote: calls of several models and two
 * keys, one refused, listed newest first; filtered by key, model, outcome, status code and UTC
 * day, each as GET /account/requests answers the same filter; a row's detail; the export as CSV
 * and JSON lines, with the view's filters; "Load more" past a page; at 390 px the table's rows
 * stack without a horizontal scroll.
 */
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { devSignIn, openPage, scrollsSideways, unnamedControls, useBrowser } from '../support/browser';
import { allCallsBilled } from '../support/billed';
import { pollUntil } from '../support/poll';

const chromium = useBrowser();
const gw = useTestGateway();

const chat = (secret: string) =>
  gw.api('POST', '/v1/chat/completions', { token: secret, body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 } });
const image = (secret: string, model: string) =>
  gw.api('POST', '/v1/images/generations', { token: secret, body: { model, prompt: 'a lighthouse', size: '1024x1024' } });

interface Row {
  id: string;
  keyId: string;
  model: string;
  endpoint: string;
  status: number;
  credits: number;
  error: { type: string; code: string | null } | null;
}
/** The log as REST answers it for `query`: what the page must show for the same filter. */
const listed = async (acct: TestAccount, query = ''): Promise<Row[]> =>
  (await gw.api('GET', `/account/requests?first=100${query}`, { token: acct.idToken })).body.data;
/** The request ids the table shows, in order. */
const shownIds = (page: Page) =>
  page.locator('table.requests tbody tr[data-request-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-request-id')));
/** Waits until the table shows exactly `ids` (it is read again after each change of filter). */
const shows = (page: Page, ids: string[]) =>
  pollUntil(
    () => shownIds(page),
    (shown) => JSON.stringify(shown) === JSON.stringify(ids),
    5_000,
    50,
  );

test('calls of several models, one refused: listed, filtered, a detail opened, exported as CSV and JSON lines', async () => {
  const acct = await gw.newAccount(100);
  const alpha = await gw.newKey(acct, { name: 'alpha' });
  const beta = await gw.newKey(acct, { name: 'beta', blockedModels: ['svc-chat-1'] });
  expect((await chat(alpha.secret)).status).toBe(200);
  expect((await image(beta.secret, 'svc-creative-v8')).status).toBe(200);
  expect((await image(alpha.secret, 'flux-dev')).status).toBe(200);
  const refused = await chat(beta.secret);
  expect(refused.status).toBe(403);
  await allCallsBilled(gw, acct.id);
  // A refusal's row is written within a second of its answer; the charged ones ride with their charge.
  const rows = await pollUntil(
    () => listed(acct),
    (r) => r.length === 4,
    10_000,
    100,
  );
  const ids = rows.map((r) => r.id);
  const failed = rows.find((r) => r.status === 403)!;
  expect(failed).toMatchObject({ keyId: beta.id, model: 'svc-chat-1', endpoint: '/v1/chat/completions', credits: 0 });

  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Activity' }).click();
  await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
  await shows(page, ids);
  await cp.shot('activity-1280');

  const filters = page.getByRole('form', { name: 'Filters' });
  await filters.getByLabel('Key').selectOption({ label: 'beta' });
  await shows(
    page,
    (await listed(acct, `&keyId=${beta.id}`)).map((r) => r.id),
  );
  expect(await shownIds(page)).toHaveLength(2);
  await filters.getByLabel('Status').selectOption('error');
  await shows(page, [failed.id]);
  await filters.getByLabel('Status').selectOption('ok');
  await shows(
    page,
    (await listed(acct, `&keyId=${beta.id}&outcome=ok`)).map((r) => r.id),
  );
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await shows(page, ids);
  await filters.getByLabel('Model').selectOption('flux-dev');
  await shows(
    page,
    rows.filter((r) => r.model === 'flux-dev').map((r) => r.id),
  );
  await filters.getByLabel('Model').selectOption('');
  await filters.getByLabel('Status').selectOption('403');
  await shows(page, [failed.id]);
  await filters.getByLabel('Status').selectOption('');

  // Days are UTC: today's holds every call, tomorrow's none.
  const today = new Date().toISOString().slice(0, 10);
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  await filters.getByLabel('From (UTC day)').fill(today);
  await filters.getByLabel('To (UTC day)').fill(today);
  await shows(page, ids);
  await filters.getByLabel('From (UTC day)').fill(tomorrow);
  await filters.getByLabel('To (UTC day)').fill(tomorrow);
  await page.getByText('No requests match.').waitFor();
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await shows(page, ids);

  // A row's detail: every fact of the refused call.
  await page.getByRole('button', { name: `Details of ${failed.id}` }).click();
  const facts = page.locator(`dl[aria-label="Request ${failed.id}"]`);
  await facts.waitFor();
  const fact = async (term: string) =>
    (
      await facts
        .locator('dt', { hasText: new RegExp(`^${term}$`) })
        .locator('xpath=following-sibling::dd[1]')
        .textContent()
    )?.trim();
  expect(await fact('Request id')).toBe(failed.id);
  expect(await fact('Endpoint')).toBe('/v1/chat/completions');
  expect(await fact('Status')).toBe('403');
  expect(await fact('Credits')).toBe('0 credits');
  expect(await fact('Key')).toBe(`beta ${beta.id}`);
  expect(await fact('Error')).toBe([failed.error!.type, failed.error!.code].filter(Boolean).join(' · '));
  expect(await fact('Job')).toBe('none');
  expect(await fact('Latency')).toMatch(/^\d+ ms$/);
  await cp.shot('activity-detail-1280');

  // The export: every row the filters match, as the gateway streams it.
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
  expect(csvDownload.suggestedFilename()).toBe('requests.csv');
  const csv = readFileSync((await csvDownload.path())!, 'utf8')
    .trimEnd()
    .split('\r\n');
  expect(csv[0]).toBe(
    'id,created,keyId,model,endpoint,status,credits,promptTokens,completionTokens,images,seconds,latencyMs,idempotencyKey,errorType,errorCode,jobId',
  );
  expect(csv.slice(1).map((line) => line.split(',')[0])).toEqual(ids);
  const failedLine = csv.find((line) => line.startsWith(`${failed.id},`))!.split(',');
  expect([failedLine[2], failedLine[3], failedLine[5], failedLine[6], failedLine[13]]).toEqual([beta.id, 'svc-chat-1', '403', '0', failed.error!.type]);

  await filters.getByLabel('Key').selectOption({ label: 'alpha' });
  await shows(
    page,
    (await listed(acct, `&keyId=${alpha.id}`)).map((r) => r.id),
  );
  const [jsonlDownload] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export JSON lines' }).click()]);
  expect(jsonlDownload.suggestedFilename()).toBe('requests.jsonl');
  const lines = readFileSync((await jsonlDownload.path())!, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Row);
  expect(lines.map((r) => r.id)).toEqual(rows.filter((r) => r.keyId === alpha.id).map((r) => r.id));
  expect(new Set(lines.map((r) => r.model))).toEqual(new Set(['svc-chat-1', 'flux-dev']));
  expect(cp.errors).toEqual([]);
  await cp.context.close();

  const mobile = await openPage(chromium.browser, gw.url, 390, 844);
  await devSignIn(mobile.page, gw.url, acct.subject);
  await mobile.page.getByRole('link', { name: 'Activity' }).click();
  await shows(mobile.page, ids);
  await mobile.page.getByRole('button', { name: `Details of ${failed.id}` }).click();
  await mobile.page.locator(`dl[aria-label="Request ${failed.id}"]`).waitFor();
  expect({ sideways: await scrollsSideways(mobile.page), unnamed: await unnamedControls(mobile.page) }).toEqual({ sideways: false, unnamed: [] });
  // Stacked: each cell on a line of its own, labelled (the header row is hidden).
  const cell = mobile.page.locator(`tr[data-request-id="${failed.id}"] td[data-label="Endpoint"]`);
  // Page-side code as a string: the test program is compiled without the DOM library.
  expect(await mobile.page.evaluate(`getComputedStyle(document.querySelector('tr[data-request-id="${failed.id}"]')).display`)).toBe('block');
  expect((await cell.boundingBox())!.width).toBeGreaterThan(300);
  await mobile.shot('activity-390');
  expect(mobile.errors).toEqual([]);
  await mobile.context.close();
});

test('"Load more" reads the next page: 27 calls of a test key, 25 at first, then all 27 in order', async () => {
  const acct = await gw.newAccount(0);
  const key = await gw.newKey(acct, { name: 'free', mode: 'test' });
  for (let i = 0; i < 27; i++) expect((await chat(key.secret)).status).toBe(200);
  const rows = await pollUntil(
    () => listed(acct),
    (r) => r.length === 27,
    10_000,
    100,
  );
  const cp = await openPage(chromium.browser, gw.url);
  const { page } = cp;
  await devSignIn(page, gw.url, acct.subject);
  await page.getByRole('link', { name: 'Activity' }).click();
  await shows(
    page,
    rows.slice(0, 25).map((r) => r.id),
  );
  await page.getByRole('button', { name: 'Load more' }).click();
  await shows(
    page,
    rows.map((r) => r.id),
  );
  expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
  expect(cp.errors).toEqual([]);
  await cp.context.close();
});
