import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { pollUntil } from './poll';

/** Debian's Chromium (`apt-get install chromium`); Playwright's own browser download is not used. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const SCREENSHOTS = join(__dirname, '..', '..', 'screenshots');

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (or set CHROMIUM_PATH)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught exceptions on the gateway's own pages. */
  errors: string[];
  shot(name: string): Promise<void>;
}

/** A fresh context (own storage) at `width` px; errors from pages of `origin` are collected. */
export async function openPage(browser: Browser, origin: string, width = 1280, height = 900): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const errors: string[] = [];
  const ours = () => page.url().startsWith(origin);
  page.on('console', (m) => {
    if (m.type() === 'error' && ours()) errors.push(`${page.url()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => {
    if (ours()) errors.push(`${page.url()}: ${e.message}`);
  });
  mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    context,
    page,
    errors,
    shot: async (name) => {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
  };
}

/** The development provider's page: any user name signs in as that subject. */
export async function devSignIn(page: Page, origin: string, username: string): Promise<void> {
  await page.goto(`${origin}/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('User name').fill(username);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

/** True when the page is wider than the viewport (a horizontal scroll bar). */
// Page-side code is passed as strings: the test program is compiled without the DOM library.
export const scrollsSideways = (page: Page): Promise<boolean> =>
  page.evaluate('document.documentElement.scrollWidth > document.documentElement.clientWidth || document.body.scrollWidth > window.innerWidth');

/** Form controls without a label and buttons or links without a name: what a screen reader could not announce. */
export const unnamedControls = (page: Page): Promise<string[]> =>
  page.evaluate(`[...document.querySelectorAll('input, select, textarea, button, a[href]')]
    .filter((el) => el.type !== 'hidden')
    .filter((el) => !(el.getAttribute('aria-label') || (el.labels && el.labels.length) || (/^(BUTTON|A)$/.test(el.tagName) && el.textContent.trim())))
    .map((el) => el.outerHTML.slice(0, 120))`);

/** Milliseconds from navigation start to the console's first render (set by the app). */
export const firstRenderMs = (page: Page): Promise<number | null> => page.evaluate('window.__consoleFirstRender ?? null');

/** Waits until the job's <video> has decoded a frame (readyState >= 2, HAVE_CURRENT_DATA); answers its width. */
export async function videoPlays(page: Page, jobId: string): Promise<number> {
  const sel = JSON.stringify(`li[data-job-id="${jobId}"] video`);
  // Polled from here with one-shot evaluations: waitForFunction polls a string predicate inside
  // the page, which the console's CSP (no unsafe-eval) refuses once it has to poll (a slow machine).
  // Pressed play, as a viewer would: the page preloads only the metadata.
  await page.evaluate(`(() => { const v = document.querySelector(${sel}); if (v) { v.muted = true; void v.play().catch(() => undefined); } })()`);
  await pollUntil(
    async () => (await page.evaluate(`document.querySelector(${sel})?.readyState ?? 0`)) as number,
    (readyState) => readyState >= 2,
    30_000,
    100,
  );
  return page.evaluate(`document.querySelector(${sel}).videoWidth`);
}

/**
 * Headless Chromium for a test file: launched before its tests, closed after them. Call it before
 * `useTestGateway`: afterAll hooks run in the order they were registered, so the browser (and the
 * pages still open in it) is gone before the gateway stops.
 */
export function useBrowser(): { readonly browser: Browser } {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return {
    get browser(): Browser {
      if (!browser) throw new Error('useBrowser: the browser is launched in beforeAll, before the tests');
      return browser;
    },
  };
}
