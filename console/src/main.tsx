import { render } from 'preact';
import { App } from './app';
import { loadConfig, loadCredential, saveCredential, takeFragmentToken, type ConsoleConfig, type Credential } from './auth/session';
import { finishOidcSignIn, isOidcCallback } from './auth/oidc';
import './styles.css';

/** Start-up: read the sign-in configuration, take a credential handed back by a provider, render. */
async function boot(): Promise<void> {
  let config: ConsoleConfig | null = null;
  let credential: Credential | null = loadCredential();
  let error: string | null = null;
  try {
    config = await loadConfig();
  } catch (err) {
    error = (err as Error).message;
  }
  const devToken = takeFragmentToken();
  if (devToken) credential = { kind: 'idToken', token: devToken, via: 'dev' };
  if (config?.signIn === 'oidc' && isOidcCallback()) {
    try {
      credential = { kind: 'idToken', token: await finishOidcSignIn(config), via: 'oidc' };
    } catch (err) {
      history.replaceState(null, '', `${location.pathname}#/`);
      error = `Sign-in failed: ${(err as Error).message}`;
    }
  }
  saveCredential(credential);
  render(<App config={config} initialCredential={credential} initialError={error} />, document.getElementById('app')!);
}

void boot();
