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
    return raw ? (JSON.parse(raw) as Credential) : null;
  } catch {
    return null;
  }
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
