import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ConsoleConfig } from '../auth/session';
import { oidcSignOut } from '../auth/oidc';
import { ApiError, CREDENTIAL_REFUSED, execute } from '../api/client';
import { tokenNow } from '../api/bearer';
import { ErrorNote, Notice } from '../ui';
import { AdminSignIn, NOT_AN_OPERATOR } from './admin-sign-in';
import { adminBearer } from './admin-connection';
import { saveAdminCredential, type AdminCredential } from './admin-session';
import { AdminUpstreamsQuery } from './admin-operations';
import { Accounts } from './accounts';
import { AccountDetail } from './account-detail';
import { Upstreams } from './upstreams';
import { Daily } from './daily';
import { Deliveries } from './deliveries';
import { AuditLogView } from './audit-log';

type Route = 'accounts' | 'upstreams' | 'daily' | 'deliveries' | 'audit';
const ROUTES: Route[] = ['accounts', 'upstreams', 'daily', 'deliveries', 'audit'];
const TITLES: Record<Route | 'account' | 'not-found', string> = {
  accounts: 'Accounts',
  account: 'Account',
  upstreams: 'Upstreams',
  daily: 'Daily',
  deliveries: 'Deliveries',
  audit: 'Audit log',
  'not-found': 'Not found',
};

type Shown = { view: Route | 'not-found' } | { view: 'account'; id: string };

/** `#/accounts`, `#/accounts/<id>` (one account), `#/audit`, …; an empty hash is the account list. */
function shownOf(hash: string): Shown {
  const [name, id, ...rest] = hash.replace(/^#\/?/, '').split('/');
  if (!name) return { view: 'accounts' };
  if (name === 'accounts' && id && rest.length === 0) return { view: 'account', id };
  if (id === undefined && ROUTES.includes(name as Route)) return { view: name as Route };
  return { view: 'not-found' };
}

/** The operator console: one view at a time, chosen by the URL fragment, over the operator GraphQL operations. */
export function AdminApp(props: {
  config: ConsoleConfig | null;
  initialCredential: AdminCredential | null;
  initialError: string | null;
  initialNotice: string | null;
}) {
  const [credential, setCredential] = useState<AdminCredential | null>(props.initialCredential);
  const [error, setError] = useState<string | null>(props.initialError);
  const [notice] = useState<string | null>(props.initialNotice);
  const [shown, setShown] = useState<Shown>(shownOf(location.hash));

  useEffect(() => {
    const onHash = () => setShown(shownOf(location.hash));
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  useEffect(() => {
    document.title = `${credential ? TITLES[shown.view] : 'Sign in'} · svc operator console`;
  }, [credential, shown]);

  const leave = async () => {
    if (credential?.kind === 'idToken' && credential.via === 'oidc' && props.config) await oidcSignOut(props.config, true).catch(() => undefined);
    saveAdminCredential(null);
  };
  const endSignIn = (message: string) => {
    saveAdminCredential(null);
    setCredential(null);
    setError(message);
  };
  const connection = useMemo(
    () => (credential ? adminBearer(credential, props.config, () => endSignIn('Your sign-in has ended at the identity provider: sign in again.')) : null),
    [credential],
  );
  useEffect(() => () => void connection?.stop(), [connection]);
  const bearerRef = useRef(connection?.bearer ?? null);
  bearerRef.current = connection?.bearer ?? null;

  // A signed-in identity that is not an operator's is told so at once, and signed out.
  useEffect(() => {
    if (!connection) return;
    execute(connection.bearer, AdminUpstreamsQuery).catch((err) => {
      if (err instanceof ApiError && err.code === 'permission_denied') endSignIn(NOT_AN_OPERATOR);
    });
  }, [connection]);
  useEffect(() => {
    const refused = (e: Event) => {
      const b = bearerRef.current;
      if (!b || (e as CustomEvent<string>).detail !== tokenNow(b)) return;
      endSignIn('The gateway no longer accepts this sign-in (expired or revoked): sign in again.');
    };
    addEventListener(CREDENTIAL_REFUSED, refused);
    return () => removeEventListener(CREDENTIAL_REFUSED, refused);
  }, [credential]);

  const signIn = (c: AdminCredential) => {
    saveAdminCredential(c);
    setError(null);
    setCredential(c);
  };
  const signOut = async () => {
    await leave();
    setCredential(null);
    history.replaceState(null, '', `${location.pathname}#/`);
  };

  if (!credential || !connection) {
    return (
      <main class="narrow">
        <h1>svc operator console</h1>
        <ErrorNote message={error} />
        <Notice message={notice} />
        <AdminSignIn config={props.config} onSignIn={signIn} />
      </main>
    );
  }

  const token = connection.bearer;
  const current = shown.view === 'account' ? 'accounts' : shown.view;
  return (
    <>
      <header class="top admin">
        <span class="brand">svc operator</span>
        <nav aria-label="Views">
          {ROUTES.map((r) => (
            <a href={`#/${r}`} aria-current={r === current ? 'page' : undefined}>
              {TITLES[r]}
            </a>
          ))}
        </nav>
        <span class="who">{credential.kind === 'adminToken' ? 'ADMIN_TOKEN' : 'Operator'}</span>
        <button type="button" class="secondary" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        <h1>{TITLES[shown.view]}</h1>
        <ErrorNote message={error} />
        {shown.view === 'accounts' && <Accounts token={token} />}
        {shown.view === 'account' && <AccountDetail token={token} id={shown.id} />}
        {shown.view === 'upstreams' && <Upstreams token={token} />}
        {shown.view === 'daily' && <Daily token={token} />}
        {shown.view === 'deliveries' && <Deliveries token={token} />}
        {shown.view === 'audit' && <AuditLogView token={token} />}
        {shown.view === 'not-found' && (
          <p>
            There is no view at {location.hash}. <a href="#/accounts">Go to Accounts</a>.
          </p>
        )}
      </main>
    </>
  );
}
