import type { ConsoleConfig } from './session';

/**
 * OpenID Connect as a public client: authorization code with PKCE (oidc-client-ts), redirecting
 * back to /console/. Loaded only when OIDC_ISSUER is set, so the development setup never pays for it.
 */
async function userManager(config: ConsoleConfig) {
  if (!config.oidc?.clientId) throw new Error('OIDC_CLIENT_ID is not set on the gateway: the console cannot sign in.');
  const { UserManager, WebStorageStateStore } = await import('oidc-client-ts');
  return new UserManager({
    authority: config.oidc.issuer,
    client_id: config.oidc.clientId,
    redirect_uri: `${location.origin}/console/`,
    response_type: 'code',
    scope: 'openid',
    loadUserInfo: false,
    automaticSilentRenew: false,
    userStore: new WebStorageStateStore({ store: sessionStorage }),
  });
}

export async function startOidcSignIn(config: ConsoleConfig): Promise<void> {
  await (await userManager(config)).signinRedirect();
}

export const isOidcCallback = (): boolean => {
  const q = new URLSearchParams(location.search);
  return q.has('state') && (q.has('code') || q.has('error'));
};

/** Completes the redirect: exchanges the code (with the PKCE verifier) and answers the ID token. */
export async function finishOidcSignIn(config: ConsoleConfig): Promise<string> {
  const user = await (await userManager(config)).signinRedirectCallback();
  history.replaceState(null, '', `${location.pathname}#/`);
  if (!user.id_token) throw new Error('The identity provider returned no ID token.');
  return user.id_token;
}

export async function oidcSignOut(config: ConsoleConfig): Promise<void> {
  await (await userManager(config)).removeUser();
}
