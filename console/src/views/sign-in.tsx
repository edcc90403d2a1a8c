import { useState } from 'preact/hooks';
import type { ConsoleConfig, Credential } from '../auth/session';
import { startOidcSignIn } from '../auth/oidc';
import { startDevSignIn } from '../auth/dev-sign-in';
import { execute, describeError } from '../api/client';
import { ModelsQuery } from '../api/operations';
import { ErrorNote } from '../ui';
import { SecretForm } from './secret-form';

/** Sign in with the identity provider (OIDC or the development one), or paste an API key. */
export function SignIn({ config, onSignIn }: { config: ConsoleConfig | null; onSignIn: (c: Credential) => void }) {
  const [apiKey, setApiKey] = useState('');
  // Each sign-in's refusal is shown beside it: the provider's in its card, the key's under its field.
  const [error, setError] = useState<string | null>(null);
  const [keyError, setKeyError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const providerSignIn = async () => {
    setError(null);
    if (!config) return;
    // The view asked for (a deep link opened signed out) is kept through the sign-in.
    if (config.signIn === 'dev') {
      startDevSignIn(config.devSignInUrl ?? '/dev-idp/sign-in', location.hash);
      return;
    }
    try {
      setBusy(true);
      await startOidcSignIn(config, location.hash);
    } catch (err) {
      setBusy(false);
      setError(describeError(err));
    }
  };

  const useKey = async (e: Event) => {
    e.preventDefault();
    const token = apiKey.trim();
    if (!/^svc_(live|test)_[A-Za-z0-9_]+$/.test(token)) {
      setKeyError('An API key looks like svc_live_… or svc_test_….');
      return;
    }
    setKeyError(null);
    setBusy(true);
    try {
      await execute(token, ModelsQuery);
      onSignIn({ kind: 'apiKey', token });
    } catch (err) {
      setKeyError(describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="stack">
      <section class="card" aria-labelledby="owner-heading">
        <h2 id="owner-heading">Account owner</h2>
        <p>
          {config?.signIn === 'oidc'
            ? 'Sign in with your identity provider to manage keys, credits and jobs.'
            : 'Development identity provider: any user name signs in as that user.'}
        </p>
        <button type="button" onClick={providerSignIn} disabled={!config || busy}>
          Sign in
        </button>
        <ErrorNote message={error} />
      </section>
      <section class="card" aria-labelledby="key-heading">
        <h2 id="key-heading">Sign in with an API key</h2>
        <p>A key sees its account's jobs, the models and quotes; account management stays hidden.</p>
        <SecretForm id="api-key" label="API key" value={apiKey} error={keyError} busy={busy} button="Use API key" onInput={setApiKey} onSubmit={useKey} />
      </section>
    </div>
  );
}
