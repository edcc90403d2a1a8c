import express, { Router } from 'express';
import type { Request } from 'express';
import { DomainError, invalidField } from '../../domain/errors/domain-error';

/** What the page needs of the development identity provider: minting an ID token for a subject. */
export interface DevTokenIssuer {
  issue(subject: string, options?: { expiresIn?: string | number }): Promise<string>;
}

const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;
/** The console's random state (base64url, 128 bits or more), carried from its button back to it. */
const STATE = /^[A-Za-z0-9_-]{16,128}$/;

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The state the console sent, when it is one; anything else is dropped (the console then ignores the sign-in). */
const validState = (value: unknown): string | null => (typeof value === 'string' && STATE.test(value) ? value : null);

const page = (state: string | null) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · development identity provider</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;margin:0;display:grid;place-items:center;min-height:100vh;background:#f4f5f7;color:#1c1e21}
main{background:#fff;padding:2rem;border-radius:8px;box-shadow:0 1px 4px #0002;max-width:22rem;width:calc(100% - 2rem);box-sizing:border-box}
h1{font-size:1.25rem;margin:0 0 .5rem}p{color:#555;font-size:.9rem}label{display:block;font-weight:600;margin:1rem 0 .25rem}
input{width:100%;box-sizing:border-box;padding:.5rem;font:inherit;border:1px solid #999;border-radius:4px}
button{margin-top:1rem;width:100%;padding:.6rem;font:inherit;font-weight:600;background:#2754c5;color:#fff;border:0;border-radius:4px;cursor:pointer}
</style></head>
<body><main>
<h1>Development identity provider</h1>
<p>Any user name signs in as that user (an ID token for that subject). This provider exists only
without OIDC_ISSUER and never under NODE_ENV=production.</p>
<form method="post" action="/dev-idp/sign-in">${state ? `\n<input type="hidden" name="state" value="${escapeHtml(state)}">` : ''}
<label for="username">User name</label>
<input id="username" name="username" required maxlength="64" pattern="[A-Za-z0-9._@\\-]{1,64}" autocomplete="username" autofocus>
<button type="submit">Sign in</button>
</form>${state ? '' : '\n<p>Opened without the console: the console ignores a sign-in it did not start. <a href="/console/">Start from the console.</a></p>'}
</main></body></html>`;

/**
 * Login CSRF: another site's page posting this form would sign the visitor's browser in as a
 * user of that site's choosing. Browsers say where a form post comes from (Sec-Fetch-Site, and
 * Origin on every POST); a post from another site is refused. A client that sends neither (curl,
 * a script) is not a browser another site can drive, and is served.
 */
function fromAnotherSite(req: Request): boolean {
  const site = req.get('sec-fetch-site');
  if (site !== undefined) return site !== 'same-origin' && site !== 'none';
  const origin = req.get('origin');
  if (origin === undefined) return false;
  try {
    return new URL(origin).host !== req.get('host');
  } catch {
    return true; // "null" (a sandboxed frame, a data: page) or garbage
  }
}

/**
 * The development identity provider's sign-in page: a user name becomes an ID token for that
 * subject, handed to the console in the URL fragment (never sent to a server; the console
 * removes it at once) with the `state` the console opened the page with. The console takes the
 * token only with the state it is waiting for, so a link carrying someone else's token (login
 * CSRF through the fragment) signs nobody in. Mounted only when the development provider is the
 * identity provider.
 */
export function devSignInRoutes(idp: DevTokenIssuer): Router {
  const r = Router();
  r.get('/dev-idp/sign-in', (req, res) => {
    res.setHeader('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
    res.setHeader('Cache-Control', 'no-store');
    res.type('html').send(page(validState(req.query.state)));
  });
  r.post('/dev-idp/sign-in', express.urlencoded({ extended: false, limit: '2kb', parameterLimit: 5 }), async (req, res) => {
    if (fromAnotherSite(req)) throw new DomainError('permission_error', 'Sign-in forms posted from another site are refused.', { code: 'cross_site_sign_in' });
    const username = (req.body as Record<string, unknown> | undefined)?.username;
    if (typeof username !== 'string' || !USERNAME.test(username)) {
      throw invalidField(['username'], '1 to 64 letters, digits or . _ @ -');
    }
    const sentState = (req.body as Record<string, unknown>).state;
    const state = validState(sentState);
    if (sentState !== undefined && sentState !== '' && state === null) throw invalidField(['state'], '16 to 128 letters, digits, _ or -');
    const idToken = await idp.issue(username, { expiresIn: '12h' });
    res.setHeader('Cache-Control', 'no-store');
    res.redirect(303, `/console/#id_token=${encodeURIComponent(idToken)}${state ? `&state=${state}` : ''}`);
  });
  return r;
}
