/** Who the console speaks for: an owner's ID token (all views) or a pasted API key (jobs and models only). */
export type Credential = { kind: 'idToken'; token: string; via: 'dev' | 'oidc' } | { kind: 'apiKey'; token: string };

export interface ConsoleConfig {
  signIn: 'dev' | 'oidc';
  devSignInUrl?: string;
  oidc?: { issuer: string; clientId: string | null };
}

const STORAGE_KEY = 'svc.console.credential';

/** Kept for the tab only (sessionStorage): closing the tab signs out. */
export function loadCredential(): Credential | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    const stored: unknown = raw ? JSON.parse(raw) : null;
    // Anything else kept there (another version's shape, a hand edit) is no credential: it showed
    // an empty signed-in page that neither worked nor signed out.
    return isCredential(stored) ? stored : null;
  } catch {
    return null;
  }
}

function isCredential(value: unknown): value is Credential {
  if (!value || typeof value !== 'object') return false;
  const c = value as Record<string, unknown>;
  if (typeof c.token !== 'string' || c.token === '') return false;
  return c.kind === 'apiKey' || (c.kind === 'idToken' && (c.via === 'dev' || c.via === 'oidc'));
}

export function saveCredential(c: Credential | null): void {
  if (c) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(c));
  else sessionStorage.removeItem(STORAGE_KEY);
}

export async function loadConfig(): Promise<ConsoleConfig> {
  const res = await fetch('/console/config.json', { cache: 'no-store' });
  if (!res.ok) throw new Error(`The console configuration could not be read (${res.status}).`);
  return (await res.json()) as ConsoleConfig;
}
