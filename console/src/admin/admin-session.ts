/**
 * Who the operator console speaks for: an operator's ID token (its subject in ADMIN_SUBJECTS) or
 * ADMIN_TOKEN pasted. Kept in sessionStorage under a key of its own (never localStorage): closing
 * the tab signs out, and the owner's console in the same tab keeps its own sign-in.
 */
export type AdminCredential = { kind: 'idToken'; token: string; via: 'dev' | 'oidc' } | { kind: 'adminToken'; token: string };

const STORAGE_KEY = 'svc.console.admin.credential';

export function loadAdminCredential(): AdminCredential | null {
  try {
    const raw = sessionStorage.getItem(STORAGE_KEY);
    const c = (raw ? JSON.parse(raw) : null) as Record<string, unknown> | null;
    if (!c || typeof c.token !== 'string' || c.token === '') return null;
    if (c.kind === 'adminToken') return { kind: 'adminToken', token: c.token };
    if (c.kind === 'idToken' && (c.via === 'dev' || c.via === 'oidc')) return { kind: 'idToken', token: c.token, via: c.via };
    return null;
  } catch {
    return null;
  }
}

export function saveAdminCredential(c: AdminCredential | null): void {
  if (c) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(c));
  else sessionStorage.removeItem(STORAGE_KEY);
}
