import { useState } from 'preact/hooks';
import type { ConsoleConfig } from '../auth/session';
import { startOidcSignIn } from '../auth/oidc';
import { startDevSignIn } from '../auth/dev-sign-in';
import { ApiError, describeError, execute } from '../api/client';
import { ErrorNote } from '../ui';
import { SecretForm } from '../views/secret-form';
import { AdminUpstreamsQuery } from './admin-operations';
import type { AdminCredential } from './admin-session';

/** What a refusal of the operator check says: the identity is known, it is not an operator. */
export const NOT_AN_OPERATOR = "This identity is not an operator's: its subject is not in the gateway's ADMIN_SUBJECTS.";

/** An operator signs in with the identity provider (a subject in ADMIN_SUBJECTS), or pastes ADMIN_TOKEN. */
export function AdminSignIn({ config, onSignIn }: { config: ConsoleConfig | null; onSignIn: (c: AdminCredential) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [tokenError, setTokenError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const providerSignIn = async () => {
    setError(null);
    if (!config) return;
    if (config.signIn === 'dev') {
      startDevSignIn(config.devSignInUrl ?? '/dev-idp/sign-in', location.hash, 'admin');
      return;
    }
    try {
      setBusy(true);
      await startOidcSignIn(config, location.hash, 'admin');
    } catch (err) {
      setBusy(false);
      setError(describeError(err));
    }
  };

  const useToken = async (e: Event) => {
    e.preventDefault();
    const t = token.trim();
    if (t.length < 16) {
      setTokenError('ADMIN_TOKEN is at least 16 characters.');
      return;
    }
    setTokenError(null);
    setBusy(true);
    try {
      // Tried once before it is kept: a wrong token is said here, under its field.
      await execute(t, AdminUpstreamsQuery);
      onSignIn({ kind: 'adminToken', token: t });
    } catch (err) {
      setTokenError(err instanceof ApiError && err.code === 'authentication_error' ? 'The gateway does not accept this token.' : describeError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="stack">
      <section class="card" aria-labelledby="operator-heading">
        <h2 id="operator-heading">Operator</h2>
        <p>
          {config?.signIn === 'oidc'
            ? 'Sign in with your identity provider; your subject must be listed in ADMIN_SUBJECTS.'
            : 'Development identity provider: sign in as a user name listed in ADMIN_SUBJECTS.'}
        </p>
        <button type="button" onClick={providerSignIn} disabled={!config || busy}>
          Sign in
        </button>
        <ErrorNote message={error} />
      </section>
      <section class="card" aria-labelledby="token-heading">
        <h2 id="token-heading">Sign in with ADMIN_TOKEN</h2>
        <p>For development: the token is kept in this tab only.</p>
        <SecretForm
          id="admin-token"
          label="Admin token"
          value={token}
          error={tokenError}
          busy={busy}
          button="Use admin token"
          onInput={setToken}
          onSubmit={useToken}
        />
      </section>
    </div>
  );
}
