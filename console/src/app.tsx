import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ConsoleConfig, Credential } from './auth/session';
import { saveCredential } from './auth/session';
import { IGNORED_SIGN_IN, readFragmentSignIn } from './auth/dev-sign-in';
import { oidcSignOut } from './auth/oidc';
import { openConnection, type Connection } from './api/connection';
import { tokenNow } from './api/bearer';
import { CREDENTIAL_REFUSED } from './api/client';
import { SignIn } from './views/sign-in';
import { Overview } from './views/overview';
import { Keys } from './views/keys';
import { Jobs } from './views/jobs';
import { Models } from './views/models';
import { Activity } from './views/activity';
import { Settings } from './views/settings';
import { Purchases } from './views/purchases';
import { NotFound } from './views/not-found';
import { ErrorNote, Notice } from './ui';
import { LiveStatusNote } from './views/live-status-note';

type Route = 'overview' | 'activity' | 'purchases' | 'keys' | 'jobs' | 'models' | 'settings';
/** What the hash shows: a view, or 'not-found' for a hash that names none. */
type Shown = Route | 'not-found';
const OWNER_ROUTES: Route[] = ['overview', 'activity', 'purchases', 'keys', 'jobs', 'models', 'settings'];
const KEY_ROUTES: Route[] = ['jobs', 'models'];
const TITLES: Record<Shown, string> = {
  overview: 'Overview',
  activity: 'Activity',
  purchases: 'Purchases',
  keys: 'Keys',
  jobs: 'Jobs',
  models: 'Models',
  settings: 'Settings',
  'not-found': 'Not found',
};

/** The view the hash names (`#/purchases?session=…` names purchases) and what follows its `?`. */
const hashParts = (hash: string): { name: string; query: string } => {
  const [name = '', query = ''] = hash.replace(/^#\/?/, '').split('?', 2);
  return { name, query };
};

function currentRoute(allowed: Route[]): Shown {
  const name = hashParts(location.hash).name as Route;
  if (name === ('' as Route) || allowed.includes(name)) return name || allowed[0]!;
  // An owner's view opened with an API key shows the key's first view; anything else is no view.
  return OWNER_ROUTES.includes(name) ? allowed[0]! : 'not-found';
}

declare global {
  interface Window {
    __consoleFirstRender?: number;
  }
}

export function App(props: { config: ConsoleConfig | null; initialCredential: Credential | null; initialError: string | null; initialNotice: string | null }) {
  const [credential, setCredential] = useState<Credential | null>(props.initialCredential);
  const [error, setError] = useState<string | null>(props.initialError);
  // A passing word (a sign-in link that was ignored): gone once the user moves on to another view.
  const [notice, setNotice] = useState<string | null>(props.initialNotice);
  // The last secret created in this tab, kept in memory only, so the Jobs form can queue with it.
  // The key created last in this tab: Jobs queues with its secret until it is revoked.
  const [recentKey, setRecentKey] = useState<{ secret: string; keyId: string } | null>(null);
  const recentSecret = recentKey?.secret ?? null;
  const routes = credential?.kind === 'apiKey' ? KEY_ROUTES : OWNER_ROUTES;
  const [route, setRoute] = useState<Shown>(currentRoute(routes));
  // The hash as it is now: "There is no view at …" names the hash of the moment (from one unknown
  // hash to another the route stays 'not-found', and the page named the first).
  const [hash, setHash] = useState(location.hash);

  useEffect(() => {
    window.__consoleFirstRender ??= performance.now();
  }, []);
  // Tabs, history and screen readers name the page after the view shown.
  useEffect(() => {
    document.title = `${credential ? TITLES[route] : 'Sign in'} · svc console`;
  }, [credential, route]);
  useEffect(() => {
    // A fragment token arriving without a page load (a link clicked inside the open console) never
    // answers this tab's own sign-in, which comes back through a full redirect: dropped at once.
    const moved = () => setNotice(readFragmentSignIn() ? IGNORED_SIGN_IN : null);
    addEventListener('hashchange', moved);
    return () => removeEventListener('hashchange', moved);
  }, []);
  useEffect(() => {
    const onHash = () => {
      const shown = currentRoute(routes);
      setRoute(shown);
      setHash(location.hash);
      // An owner's view opened with an API key shows the key's first view: the address says which.
      const { name } = hashParts(location.hash);
      if (shown !== 'not-found' && name !== '' && name !== shown) history.replaceState(null, '', `${location.pathname}#/${shown}`);
    };
    onHash();
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, [credential]);

  const connectionRef = useRef<Connection | null>(null);
  /** Ends the sign-in: renewals stopped, the socket closed, then an OIDC sign-in's tokens forgotten (`revoke`: at the provider too). */
  const leave = async (revoke: boolean) => {
    const ending = connectionRef.current;
    connectionRef.current = null;
    await ending?.close();
    if (credential?.kind === 'idToken' && credential.via === 'oidc' && props.config) await oidcSignOut(props.config, revoke).catch(() => undefined);
    saveCredential(null);
  };
  /** Signs out without being asked, saying why; once, however many calls were refused. */
  const endSignIn = (message: string, revoke: boolean) => {
    if (!connectionRef.current) return;
    void leave(revoke);
    // Forgotten now as well: `leave` forgets it only once the socket has closed and the provider
    // answered, and a reload meanwhile must not sign back in with a credential already refused.
    saveCredential(null);
    setCredential(null);
    setError(message);
  };
  // One per sign-in: a renewed token changes nothing here, so the views keep their state.
  const connection = useMemo(
    () =>
      credential
        ? openConnection(credential, props.config, () =>
            // The provider ended the sign-in (signed out there, grant revoked): its refresh token is dead already.
            endSignIn('Your sign-in has ended at the identity provider and could not be renewed: sign in again.', false),
          )
        : null,
    [credential],
  );
  connectionRef.current = connection;
  useEffect(() => () => void connection?.close(), [connection]);

  useEffect(() => {
    const refused = (e: Event) => {
      // Only the signed-in credential, as it is now (not one a renewal replaced); a refused
      // queueing key is the form's error, not a sign-out.
      const current = connectionRef.current;
      if (!current || (e as CustomEvent<string>).detail !== tokenNow(current.bearer)) return;
      endSignIn('The gateway no longer accepts this sign-in (expired or revoked): sign in again.', true);
    };
    addEventListener(CREDENTIAL_REFUSED, refused);
    return () => removeEventListener(CREDENTIAL_REFUSED, refused);
  }, [credential]);

  const signIn = (c: Credential) => {
    saveCredential(c);
    setError(null);
    setCredential(c);
  };
  const signOut = async () => {
    await leave(true);
    setRecentKey(null);
    setCredential(null);
    history.replaceState(null, '', `${location.pathname}#/`);
  };

  if (!credential || !connection) {
    return (
      <main class="narrow">
        <h1>svc console</h1>
        <ErrorNote message={error} />
        <Notice message={notice} />
        <SignIn config={props.config} onSignIn={signIn} />
      </main>
    );
  }

  const { bearer, live, liveStatus } = connection;
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
        <LiveStatusNote status={liveStatus} />
        <ErrorNote message={error} />
        <Notice message={notice} />
        {credential.kind === 'apiKey' && (
          <p class="hint">Signed in with an API key: its account's jobs, the models and quotes. Account management needs the owner's sign-in.</p>
        )}
        {route === 'overview' && credential.kind === 'idToken' && <Overview token={bearer} live={live} />}
        {route === 'keys' && credential.kind === 'idToken' && (
          <Keys
            token={bearer}
            onSecret={(secret, keyId) => setRecentKey({ secret, keyId })}
            onRevoked={(keyId) => setRecentKey((k) => (k?.keyId === keyId ? null : k))}
          />
        )}
        {route === 'jobs' && (
          <Jobs
            token={bearer}
            live={live}
            liveStatus={liveStatus}
            queueKey={credential.kind === 'apiKey' ? credential.token : recentSecret}
            ownerView={credential.kind === 'idToken'}
          />
        )}
        {route === 'models' && <Models token={bearer} />}
        {route === 'activity' && credential.kind === 'idToken' && <Activity token={bearer} />}
        {route === 'settings' && credential.kind === 'idToken' && <Settings token={bearer} />}
        {route === 'purchases' && credential.kind === 'idToken' && <Purchases token={bearer} live={live} query={hashParts(hash).query} />}
        {route === 'not-found' && <NotFound hash={hash} home={TITLES[routes[0]!]} />}
      </main>
    </>
  );
}
