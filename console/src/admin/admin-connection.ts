import type { ConsoleConfig } from '../auth/session';
import { refreshOidcIdToken } from '../auth/oidc';
import { RenewingToken } from '../auth/renewing-token';
import type { Bearer } from '../api/bearer';
import { saveAdminCredential, type AdminCredential } from './admin-session';

/**
 * What the operator console calls /graphql with: an OIDC sign-in's ID token renewed in place (as
 * the owner's console does, see connection.ts), anything else as it is. The operator console
 * reads and acts over HTTP only: it holds no socket.
 */
export function adminBearer(credential: AdminCredential, config: ConsoleConfig | null, onEnded: () => void): { bearer: Bearer; stop: () => Promise<void> } {
  if (credential.kind !== 'idToken' || credential.via !== 'oidc' || !config) return { bearer: credential.token, stop: () => Promise.resolve() };
  const renewing = new RenewingToken(credential.token, () => refreshOidcIdToken(config), {
    renewed: (token) => saveAdminCredential({ ...credential, token }),
    ended: onEnded,
  });
  renewing.start();
  return { bearer: renewing, stop: () => renewing.stop() };
}
