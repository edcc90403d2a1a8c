import type { IdentityVerifier } from '../ports/identity';
import type { Account, AccountService } from './account-service';

/** An ID token → its account, created on first sight with a zero balance. */
export class AccountAuthenticator {
  constructor(
    private readonly identity: IdentityVerifier,
    private readonly accounts: AccountService,
  ) {}

  async authenticate(idToken: string): Promise<Account> {
    const who = await this.identity.verify(idToken);
    return this.accounts.findOrCreate(who);
  }
}
