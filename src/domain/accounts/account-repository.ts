/** The accounts' side in the database, as the account service uses it. */
import type { SqlExecutor } from '../ports/database';
import type { WebhookTarget } from '../webhooks/webhook-repository';
import type { Account } from './account-service';

export interface AccountRepository {
  /** Runs `work` in one transaction: commits when it resolves, rolls back when it throws. */
  transaction<T>(work: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** The account of the identity, created (with the id given and a zero balance) when there is none. */
  findOrCreate(id: string, identity: { issuer: string; subject: string }): Promise<Account>;
  /** The account with its balance shown (credits leased to instances and not yet charged counted as its own); in `tx` when given. */
  find(accountId: string, tx?: SqlExecutor): Promise<Account | undefined>;
  /** Answers false when there is no such account; in `tx` when given. */
  setMember(accountId: string, member: boolean, tx?: SqlExecutor): Promise<boolean>;
  /** The balance below which `balance.low` is sent (null: none); a changed threshold is armed afresh. */
  setLowBalanceAlert(accountId: string, thresholdMicro: number | null): Promise<void>;
  /** The account's webhook, or none (null clears URL and secret). */
  setWebhook(accountId: string, webhook: WebhookTarget | null): Promise<void>;
  /** A new secret for the account's webhook: answers its URL, or undefined when it has none. */
  setWebhookSecret(accountId: string, secret: string): Promise<string | undefined>;
}
