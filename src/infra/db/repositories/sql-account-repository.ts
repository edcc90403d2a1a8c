import type { Database, SqlExecutor } from '../../../domain/ports/database';
import type { Account } from '../../../domain/accounts/account-service';
import type { AccountRepository } from '../../../domain/accounts/account-repository';

interface AccountRow {
  id: string;
  issuer: string;
  subject: string;
  balance_micro: string | number;
  member: boolean;
  created_at: Date;
}

const toAccount = (r: AccountRow): Account => ({
  id: r.id,
  issuer: r.issuer,
  subject: r.subject,
  balanceMicro: Number(r.balance_micro),
  member: r.member,
  created: new Date(r.created_at),
});

/** The `accounts` table's SQL. */
export class SqlAccountRepository implements AccountRepository {
  constructor(private readonly db: Database) {}

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async findOrCreate(id: string, identity: { issuer: string; subject: string }): Promise<Account> {
    // `do update` (a no-op) rather than `do nothing` so the existing row is returned too.
    const row = await this.db.one<AccountRow>(
      `insert into accounts (id, issuer, subject) values (?, ?, ?)
       on conflict (issuer, subject) do update set issuer = excluded.issuer
       returning id, issuer, subject, balance_micro, member, created_at`,
      [id, identity.issuer, identity.subject],
    );
    return toAccount(row!);
  }

  async find(accountId: string, tx: SqlExecutor = this.db): Promise<Account | undefined> {
    // Credits leased to instances and not yet charged are still the account's (svc_shown_balance).
    const row = await tx.one<AccountRow>(`select id, issuer, subject, member, created_at, svc_shown_balance(id) as balance_micro from accounts where id = ?`, [
      accountId,
    ]);
    return row ? toAccount(row) : undefined;
  }

  async setMember(accountId: string, member: boolean): Promise<boolean> {
    const touched = await this.db.run(`update accounts set member = ? where id = ?`, [member, accountId]);
    return touched > 0;
  }
}
