import type { IdentityVerifier } from '../ports/identity';
import type { AccountService } from './account-service';

/** Identities whose account id is remembered; past it the oldest is forgotten (and looked up again). */
const MAX_REMEMBERED = 20_000;

/**
 * An ID token → its account, created on first sight with a zero balance. The token is verified
 * every time (signature, expiry, audience); which account an (issuer, subject) owns never
 * changes once created (accounts are not deleted), so that answer is remembered: a console's
 * WebSocket connects and starts operations without an `insert … on conflict` each time.
 */
export class AccountAuthenticator {
  private readonly accountIds = new Map<string, string>();

  constructor(
    private readonly identity: IdentityVerifier,
    private readonly accounts: AccountService,
  ) {}

  /**
   * The account id only (a balance read here would be stale by the time anyone used it), the
   * token's subject (an operator's is listed in ADMIN_SUBJECTS), and until when the token may be
   * used: a WebSocket opened with it is closed then.
   */
  async authenticate(idToken: string): Promise<{ id: string; subject: string; usableUntil: number }> {
    const who = await this.identity.verify(idToken);
    const key = `${who.issuer}\n${who.subject}`;
    const known = this.accountIds.get(key);
    if (known !== undefined) return { id: known, subject: who.subject, usableUntil: who.usableUntil };
    const { id } = await this.accounts.findOrCreate(who);
    if (this.accountIds.size >= MAX_REMEMBERED) this.accountIds.delete(this.accountIds.keys().next().value!);
    this.accountIds.set(key, id);
    return { id, subject: who.subject, usableUntil: who.usableUntil };
  }
}
