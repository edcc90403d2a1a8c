import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ConsoleConfig, Credential } from './auth/session';
import { saveCredential } from './auth/session';
import { oidcSignOut } from './auth/oidc';
import { liveClient } from './api/live';
import { CREDENTIAL_REFUSED } from './api/client';
import { SignIn } from './views/sign-in';
import { Overview } from './views/overview';
import { Keys } from './views/keys';
import { Jobs } from './views/jobs';
import { Models } from './views/models';
import { ErrorNote } from './ui';

type Route = 'overview' | 'keys' | 'jobs' | 'models';
const OWNER_ROUTES: Route[] = ['overview', 'keys', 'jobs', 'models'];
const KEY_ROUTES: Route[] = ['jobs', 'models'];
const TITLES: Record<Route, string> = { overview: 'Overview', keys: 'Keys', jobs: 'Jobs', models: 'Models' };

function currentRoute(allowed: Route[]): Route {
  const name = location.hash.replace(/^#\/?/, '') as Route;
  return allowed.includes(name) ? name : allowed[0]!;
}

declare global {
  interface Window {
    __consoleFirstRender?: number;
  }
}

export function App(props: { config: ConsoleConfig | null; initialCredential: Credential | null; initialError: string | null }) {
  const [credential, setCredential] = useState<Credential | null>(props.initialCredential);
  const [error, setError] = useState<string | null>(props.initialError);
  // The last secret created in this tab, kept in memory only, so the Jobs form can queue with it.
  const [recentSecret, setRecentSecret] = useState<string | null>(null);
  const credentialRef = useRef(credential);
  credentialRef.current = credential;
  const routes = credential?.kind === 'apiKey' ? KEY_ROUTES : OWNER_ROUTES;
  const [route, setRoute] = useState<Route>(currentRoute(routes));

  useEffect(() => {
    window.__consoleFirstRender ??= performance.now();
  }, []);
  useEffect(() => {
    const onHash = () => setRoute(currentRoute(routes));
    onHash();
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, [credential]);

  useEffect(() => {
    const refused = (e: Event) => {
      // Only the signed-in credential; a refused queueing key is the form's error, not a sign-out.
      if ((e as CustomEvent<string>).detail !== credentialRef.current?.token) return;
      saveCredential(null);
      setCredential(null);
      setError('The gateway no longer accepts this sign-in (expired or revoked): sign in again.');
    };
    addEventListener(CREDENTIAL_REFUSED, refused);
    return () => removeEventListener(CREDENTIAL_REFUSED, refused);
  }, []);

  const live = useMemo(() => (credential ? liveClient(credential.token) : null), [credential]);
  useEffect(() => () => void live?.dispose(), [live]);

  const signIn = (c: Credential) => {
    saveCredential(c);
    setError(null);
    setCredential(c);
  };
  const signOut = async () => {
    if (credential?.kind === 'idToken' && credential.via === 'oidc' && props.config) await oidcSignOut(props.config).catch(() => undefined);
    saveCredential(null);
    setRecentSecret(null);
    setCredential(null);
    history.replaceState(null, '', `${location.pathname}#/`);
  };

  if (!credential || !live) {
    return (
      <main class="narrow">
        <h1>svc console</h1>
        <ErrorNote message={error} />
        <SignIn config={props.config} onSignIn={signIn} />
      </main>
    );
  }

  return (
    <>
      <header class="top">
        <span class="brand">svc console</span>
        <nav aria-label="Views">
          {routes.map((r) => (
            <a href={`#/${r}`} aria-current={r === route ? 'page' : undefined}>
              {TITLES[r]}
            </a>
          ))}
        </nav>
        <span class="who">{credential.kind === 'apiKey' ? 'API key' : 'Owner'}</span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        <h1>{TITLES[route]}</h1>
        <ErrorNote message={error} />
        {credential.kind === 'apiKey' && <p class="hint">Signed in with an API key: its account's jobs, the models and quotes. Account management needs the owner's sign-in.</p>}
        {route === 'overview' && credential.kind === 'idToken' && <Overview token={credential.token} live={live} />}
        {route === 'keys' && credential.kind === 'idToken' && <Keys token={credential.token} onSecret={setRecentSecret} />}
        {route === 'jobs' && <Jobs token={credential.token} live={live} queueKey={credential.kind === 'apiKey' ? credential.token : recentSecret} ownerView={credential.kind === 'idToken'} />}
        {route === 'models' && <Models token={credential.token} />}
      </main>
    </>
  );
}
