/**
 * The development provider's round trip, guarded against login CSRF. Its page hands the ID token
 * back in the URL fragment, and any link can carry a fragment: a link to
 * `/console/#id_token=<the attacker's token>` would sign the visitor into the attacker's account
 * (whatever they then create or pay for lands there). So the console starts every development
 * sign-in with a random state kept in this tab, the provider's page carries it through its form,
 * and a fragment token counts only when it comes back with that same state.
 */

const PENDING_KEY = 'svc.console.devSignIn';

/** Where the operator console lives; the owner's is /console/. */
export const ADMIN_PATH = '/console/admin';

/** Which console a sign-in returns to: the owner's (/console/) or the operator's (/console/admin). */
export type ConsoleApp = 'owner' | 'admin';

interface Pending {
  state: string;
  /** The view asked for before signing in (`#/jobs`), restored after. */
  route: string;
  /** Absent: the owner's console. */
  app?: ConsoleApp;
}

/** What the URL fragment held at start-up; it is removed from the URL as soon as it is read. */
export type FragmentSignIn = { token: string; state: string | null } | null;

/** 128 random bits, base64url (the provider's page accepts [A-Za-z0-9_-]{16,128}). */
function newState(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** A view's hash (`#/jobs`, `#/accounts/acct_…`), or `#/` for anything else (the route is written back into the URL). */
export const safeRoute = (hash: string): string => (/^#\/[a-z-]*(?:\/[A-Za-z0-9_]{1,80})?$/.test(hash) ? hash : '#/');

/** Goes to the provider's page with a new state, remembering it (and the view wanted) for the way back. */
export function startDevSignIn(signInUrl: string, route: string, app: ConsoleApp = 'owner'): void {
  const pending: Pending = { state: newState(), route: safeRoute(route), app };
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending));
  const url = new URL(signInUrl, location.origin);
  url.searchParams.set('state', pending.state);
  location.assign(url.toString());
}

/**
 * Reads `#id_token=…&state=…` and removes it from the URL at once, before anything else runs
 * (the token must not linger in the address bar or in history). Nothing is decided here: whether
 * it is taken depends on the sign-in mode, known only once the configuration has been read.
 */
export function readFragmentSignIn(): FragmentSignIn {
  if (!/(?:^#|&)id_token=/.test(location.hash)) return null;
  const params = new URLSearchParams(location.hash.slice(1));
  history.replaceState(null, '', `${location.pathname}#/`);
  const token = params.get('id_token');
  return token ? { token, state: params.get('state') } : null;
}

function pending(): Pending | null {
  try {
    const raw = sessionStorage.getItem(PENDING_KEY);
    return raw ? (JSON.parse(raw) as Pending) : null;
  } catch {
    return null;
  }
}

/**
 * The token, and the view to go to, when the fragment answers the sign-in this tab started (the
 * pending state is then forgotten: a state is good for one sign-in). Null otherwise: a link this
 * console did not start, which the caller ignores.
 */
export function acceptFragmentSignIn(fragment: NonNullable<FragmentSignIn>): { token: string; route: string; app: ConsoleApp } | null {
  const wanted = pending();
  if (!wanted || !fragment.state || fragment.state !== wanted.state) return null;
  sessionStorage.removeItem(PENDING_KEY);
  return { token: fragment.token, route: safeRoute(wanted.route), app: wanted.app === 'admin' ? 'admin' : 'owner' };
}

export const IGNORED_SIGN_IN = 'A sign-in link that this console did not start was ignored.';
