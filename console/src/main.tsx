import { render } from 'preact';
import { App } from './app';
import { loadConfig, loadCredential, saveCredential, type ConsoleConfig, type Credential } from './auth/session';
import { finishOidcSignIn, isOidcCallback } from './auth/oidc';
import { ADMIN_PATH, IGNORED_SIGN_IN, acceptFragmentSignIn, readFragmentSignIn, type ConsoleApp } from './auth/dev-sign-in';
import './styles.css';

const isAdminPath = () => location.pathname === ADMIN_PATH || location.pathname.startsWith(`${ADMIN_PATH}/`);

/** Start-up: read the sign-in configuration, take a credential handed back by a provider, render. */
async function boot(): Promise<void> {
  // Out of the URL before anything is awaited; judged once the sign-in mode is known.
  const fragment = readFragmentSignIn();
  let config: ConsoleConfig | null = null;
  let signedIn: { token: string; via: 'dev' | 'oidc'; app: ConsoleApp } | null = null;
  let error: string | null = null;
  let notice: string | null = null;
  try {
    config = await loadConfig();
  } catch (err) {
    error = (err as Error).message;
  }
  if (fragment) {
    // Only the development provider hands tokens over in the fragment, and only for a sign-in this
    // tab started (its state): anything else is a planted link, and the current session stays.
    const accepted = config?.signIn === 'dev' ? acceptFragmentSignIn(fragment) : null;
    if (accepted) {
      signedIn = { token: accepted.token, via: 'dev', app: accepted.app };
      // The provider hands back to /console/: an operator's sign-in goes on to /console/admin.
      history.replaceState(null, '', `${accepted.app === 'admin' ? ADMIN_PATH : location.pathname}${accepted.route}`);
    } else {
      notice = IGNORED_SIGN_IN;
    }
  }
  if (config?.signIn === 'oidc' && isOidcCallback()) {
    try {
      const done = await finishOidcSignIn(config);
      signedIn = { token: done.token, via: 'oidc', app: done.app };
    } catch (err) {
      history.replaceState(null, '', `${location.pathname}#/`);
      error = `Sign-in failed: ${(err as Error).message}`;
    }
  }
  const root = document.getElementById('app')!;
  if (signedIn?.app === 'admin' || (!signedIn && isAdminPath())) {
    // The operator console is a chunk of its own: an owner's page never loads it.
    const { bootAdmin } = await import('./admin/admin-main');
    bootAdmin(root, { config, signedIn: signedIn && { kind: 'idToken', token: signedIn.token, via: signedIn.via }, error, notice });
    return;
  }
  let credential: Credential | null = loadCredential();
  if (signedIn) credential = { kind: 'idToken', token: signedIn.token, via: signedIn.via };
  saveCredential(credential);
  render(<App config={config} initialCredential={credential} initialError={error} initialNotice={notice} />, root);
}

void boot();
