import type { UserManager } from 'oidc-client-ts';
import type { ConsoleConfig } from './session';
import { CannotRenew, RenewalRefused } from './renewing-token';
import { ADMIN_PATH, safeRoute, type ConsoleApp } from './dev-sign-in';

let manager: Promise<UserManager> | null = null;

/**
 * OpenID Connect as a public client: authorization code with PKCE (oidc-client-ts), redirecting
 * back to /console/. Loaded only when OIDC_ISSUER is set, so the development setup never pays for it.
 * One manager per page, so the discovery document is read once and not on every renewal.
 *
 * Renewal uses the refresh token (with rotation, the provider's choice), not an iframe with
 * prompt=none: current guidance for browser apps (OAuth 2.0 for Browser-Based Apps) prefers it,
 * browsers that block third-party cookies break the iframe (the provider's session cookie is not
 * sent inside it), and the gateway's CSP (frame-ancestors 'none', frame-src 'self') forbids the
 * frame anyway. `offline_access` is asked for because most providers issue a public client no
 * refresh token without it. The user, refresh token included, stays in sessionStorage like the
 * console's own credential: closing the tab still signs out.
 */
function userManager(config: ConsoleConfig): Promise<UserManager> {
  if (!config.oidc?.clientId) return Promise.reject(new Error('OIDC_CLIENT_ID is not set on the gateway: the console cannot sign in.'));
  const { issuer, clientId } = config.oidc;
  manager ??= import('oidc-client-ts').then(
    ({ UserManager, WebStorageStateStore }) =>
      new UserManager({
        authority: issuer,
        client_id: clientId,
        redirect_uri: `${location.origin}/console/`,
        response_type: 'code',
        scope: 'openid offline_access',
        loadUserInfo: false,
        // Its timers follow the access token's expiry; the gateway takes the ID token, whose
        // lifetime may differ, so renewal is scheduled on the ID token's own (renewing-token.ts).
        automaticSilentRenew: false,
        userStore: new WebStorageStateStore({ store: sessionStorage }),
      }),
  );
  manager.catch(() => (manager = null));
  return manager;
}

/**
 * `route`: the view asked for before signing in, restored after. oidc-client-ts keeps it with its
 * own state and PKCE verifier, and answers the callback only when the `state` the provider sends
 * back is one it stored in this tab: an OIDC sign-in cannot be planted by a link either (and no
 * URL-fragment token is ever taken in OIDC mode, see main.tsx).
 */
export async function startOidcSignIn(config: ConsoleConfig, route: string, app: ConsoleApp = 'owner'): Promise<void> {
  await (await userManager(config)).signinRedirect({ state: { route: safeRoute(route), app } });
}

export const isOidcCallback = (): boolean => {
  const q = new URLSearchParams(location.search);
  return q.has('state') && (q.has('code') || q.has('error'));
};

/** Completes the redirect: exchanges the code (with the PKCE verifier); answers the ID token and the view wanted. */
export async function finishOidcSignIn(config: ConsoleConfig): Promise<{ token: string; route: string; app: ConsoleApp }> {
  const user = await (await userManager(config)).signinRedirectCallback();
  const state = user.state as { route?: unknown; app?: unknown } | undefined;
  const route = safeRoute(String(state?.route ?? ''));
  const app: ConsoleApp = state?.app === 'admin' ? 'admin' : 'owner';
  // The one redirect URI is /console/: an operator's sign-in goes on to /console/admin.
  history.replaceState(null, '', `${app === 'admin' ? ADMIN_PATH : location.pathname}${route}`);
  if (!user.id_token) throw new Error('The identity provider returned no ID token.');
  return { token: user.id_token, route, app };
}

/**
 * A new ID token from the refresh token, without leaving the page. Throws RenewalRefused when the
 * provider answers with an OAuth error (invalid_grant: the session ended, the grant was revoked),
 * CannotRenew when there is nothing to renew with, and anything else (network) as it comes.
 */
export async function refreshOidcIdToken(config: ConsoleConfig): Promise<string> {
  const mgr = await userManager(config);
  const user = await mgr.getUser();
  // Without a refresh token signinSilent would fall back to the iframe, which is not used.
  if (!user?.refresh_token || !user.id_token) throw new CannotRenew('The identity provider issued no refresh token.');
  const before = user.id_token;
  let renewed;
  try {
    renewed = await mgr.signinSilent();
  } catch (err) {
    if ((err as Error).name === 'ErrorResponse') throw new RenewalRefused((err as Error).message);
    throw err;
  }
  // A provider that answers a refresh without a new ID token leaves the old one in place.
  if (!renewed?.id_token || renewed.id_token === before) throw new CannotRenew('The identity provider does not renew ID tokens.');
  return renewed.id_token;
}

/** Forgets the user (tokens) kept in sessionStorage; `revoke` also revokes the refresh token at the provider first. */
export async function oidcSignOut(config: ConsoleConfig, revoke = true): Promise<void> {
  const mgr = await userManager(config);
  // Best effort: a provider without a revocation endpoint, or out of reach, still signs out here.
  if (revoke) await mgr.revokeTokens(['refresh_token']).catch(() => undefined);
  await mgr.removeUser();
}
