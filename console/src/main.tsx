import { render } from 'preact';
import { App } from './app';
import { loadConfig, loadCredential, saveCredential, type ConsoleConfig, type Credential } from './auth/session';
import { finishOidcSignIn, isOidcCallback } from './auth/oidc';
import { IGNORED_SIGN_IN, acceptFragmentSignIn, readFragmentSignIn } from './auth/dev-sign-in';
import './styles.css';

/** Start-up: read the sign-in configuration, take a credential handed back by a provider, render. */
async function boot(): Promise<void> {
  // Out of the URL before anything is awaited; judged once the sign-in mode is known.
  const fragment = readFragmentSignIn();
  let config: ConsoleConfig | null = null;
  let credential: Credential | null = loadCredential();
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
      credential = { kind: 'idToken', token: accepted.token, via: 'dev' };
      history.replaceState(null, '', `${location.pathname}${accepted.route}`);
    } else {
      notice = IGNORED_SIGN_IN;
    }
  }
  if (config?.signIn === 'oidc' && isOidcCallback()) {
    try {
      credential = { kind: 'idToken', token: (await finishOidcSignIn(config)).token, via: 'oidc' };
    } catch (err) {
      history.replaceState(null, '', `${location.pathname}#/`);
      error = `Sign-in failed: ${(err as Error).message}`;
    }
  }
  saveCredential(credential);
  render(<App config={config} initialCredential={credential} initialError={error} initialNotice={notice} />, document.getElementById('app')!);
}

void boot();
