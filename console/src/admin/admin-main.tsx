import { render } from 'preact';
import type { ConsoleConfig } from '../auth/session';
import { AdminApp } from './admin-app';
import { loadAdminCredential, saveAdminCredential, type AdminCredential } from './admin-session';

/** The operator console at /console/admin: a credential just handed back by a provider, or the tab's own. */
export function bootAdmin(
  root: HTMLElement,
  start: { config: ConsoleConfig | null; signedIn: AdminCredential | null; error: string | null; notice: string | null },
): void {
  const credential = start.signedIn ?? loadAdminCredential();
  saveAdminCredential(credential);
  render(<AdminApp config={start.config} initialCredential={credential} initialError={start.error} initialNotice={start.notice} />, root);
}
