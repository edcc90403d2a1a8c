import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

/** A line the provider printed about a request it answered (see oidc-provider.mjs). */
export type Seen = Record<string, unknown>;

/**
 * oidc-provider in its own process on `port`, for one public client; each request it reports is
 * pushed onto `seen`. `env` reaches the provider (ID_TOKEN_TTL).
 */
export async function startProvider(
  port: number,
  clientId: string,
  redirectUri: string,
  seen: Seen[],
  env: Record<string, string> = {},
): Promise<ChildProcess> {
  const proc = spawn(process.execPath, [join(__dirname, 'oidc-provider.mjs'), String(port), clientId, redirectUri], {
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      for (const line of out.split('\n').slice(0, -1)) if (line.startsWith('{')) seen.push(JSON.parse(line));
      out = out.slice(out.lastIndexOf('\n') + 1);
      if (/ready /.test(c.toString())) resolve();
    });
    proc.once('exit', (code) => reject(new Error(`oidc-provider exited with ${code}`)));
  });
  return proc;
}

/** From the console's sign-in page through the provider's login (and consent, when asked) back to Overview. */
export async function signInAtProvider(page: Page, consoleOrigin: string, login: string): Promise<void> {
  await page.goto(`${consoleOrigin}/console/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => !u.toString().startsWith(consoleOrigin));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  const consent = page.getByRole('button', { name: 'Continue' });
  await Promise.race([consent.waitFor().then(() => consent.click()), page.waitForURL((u) => u.toString().startsWith(consoleOrigin))]);
  await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
}

/** The ID token the console keeps (sessionStorage), or null when signed out. */
export const storedIdToken = async (page: Page): Promise<string | null> =>
  (JSON.parse(((await page.evaluate('sessionStorage.getItem("svc.console.credential")')) as string | null) ?? 'null') as { token?: string } | null)?.token ??
  null;

/** The refresh token oidc-client-ts keeps (sessionStorage), or null. */
export const storedRefreshToken = async (page: Page): Promise<string | null> =>
  page.evaluate(
    '(() => { const k = Object.keys(sessionStorage).find((k) => k.startsWith("oidc.user:")); return k ? JSON.parse(sessionStorage.getItem(k)).refresh_token ?? null : null; })()',
  );

/** A JWT's claims, unverified (the test only reads them). */
export const claimsOf = (jwt: string): Record<string, unknown> => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
