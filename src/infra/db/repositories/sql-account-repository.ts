import type { Database, SqlExecutor } from '../../../domain/ports/database';
import type { Account } from '../../../domain/accounts/account-service';
import type { AccountSummary } from '../../../domain/operators/operator-repository';
import type { AccountRepository } from '../../../domain/accounts/account-repository';
import type { WebhookTarget } from '../../../domain/webhooks/webhook-repository';

/** An account's own columns, as the account and the operator's account search read them. */
export interface AccountSummaryRow {
  id: string;
  issuer: string;
  subject: string;
  balance_micro: string | number;
  member: boolean;
  created_at: Date | string;
}

interface AccountRow extends AccountSummaryRow {
  low_balance_micro: string | number | null;
  webhook_url: string | null;
}

export const toAccountSummary = (r: AccountSummaryRow): AccountSummary => ({
  id: r.id,
  issuer: r.issuer,
  subject: r.subject,
  balanceMicro: Number(r.balance_micro),
  member: r.member,
  created: new Date(r.created_at),
});

const toAccount = (r: AccountRow): Account => ({
  ...toAccountSummary(r),
  lowBalanceAlertMicro: r.low_balance_micro === null ? null : Number(r.low_balance_micro),
  webhookUrl: r.webhook_url,
});

/** The `accounts` table's SQL, and the account's alert settings (`account_alerts`). */
export class SqlAccountRepository implements AccountRepository {
  constructor(private readonly db: Database) {}

  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  async findOrCreate(id: string, identity: { issuer: string; subject: string }): Promise<Account> {
    // `do update` (a no-op) rather than `do nothing` so the existing row is returned too.
    const row = await this.db.one<AccountRow>(
      `with a as (
         insert into accounts (id, issuer, subject) values (?, ?, ?)
         on conflict (issuer, subject) do update set issuer = excluded.issuer
         returning id, issuer, subject, balance_micro, member, created_at)
       select a.*, s.low_balance_micro, s.webhook_url from a left join account_alerts s on s.account_id = a.id`,
      [id, identity.issuer, identity.subject],
    );
    return toAccount(row!);
  }

  async find(accountId: string, tx: SqlExecutor = this.db): Promise<Account | undefined> {
    // Credits leased to instances and not yet charged are still the account's (svc_shown_balance).
    const row = await tx.one<AccountRow>(
      `select a.id, a.issuer, a.subject, a.member, a.created_at, svc_shown_balance(a.id) as balance_micro, s.low_balance_micro, s.webhook_url
         from accounts a left join account_alerts s on s.account_id = a.id where a.id = ?`,
      [accountId],
    );
    return row ? toAccount(row) : undefined;
  }

  async setMember(accountId: string, member: boolean, tx: SqlExecutor = this.db): Promise<boolean> {
    const touched = await tx.run(`update accounts set member = ? where id = ?`, [member, accountId]);
    return touched > 0;
  }

  async setLowBalanceAlert(accountId: string, thresholdMicro: number | null): Promise<void> {
    // A new threshold is armed (its first crossing is told); the same one again leaves its state.
    await this.db.run(
      `insert into account_alerts (account_id, low_balance_micro) values (?, ?)
       on conflict (account_id) do update set low_balance_micro = excluded.low_balance_micro,
         low_balance_below = account_alerts.low_balance_below and account_alerts.low_balance_micro is not distinct from excluded.low_balance_micro`,
      [accountId, thresholdMicro],
    );
  }

  async setWebhook(accountId: string, webhook: WebhookTarget | null): Promise<void> {
    await this.db.run(
      `insert into account_alerts (account_id, webhook_url, webhook_secret) values (?, ?, ?)
       on conflict (account_id) do update set webhook_url = excluded.webhook_url, webhook_secret = excluded.webhook_secret`,
      [accountId, webhook?.url ?? null, webhook?.secret ?? null],
    );
  }

  async setWebhookSecret(accountId: string, secret: string): Promise<string | undefined> {
    const row = await this.db.one<{ webhook_url: string }>(
      `update account_alerts set webhook_secret = ? where account_id = ? and webhook_url is not null returning webhook_url`,
      [secret, accountId],
    );
    return row?.webhook_url;
  }
}
