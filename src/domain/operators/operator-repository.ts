import type { Account } from '../accounts/account-service';

/** An account as an operator's search lists it. */
export type AccountSummary = Pick<Account, 'id' | 'issuer' | 'subject' | 'balanceMicro' | 'member' | 'created'>;

/** What only operators read across accounts. Its SQL: infra/db/repositories/sql-operator-reads.ts. */
export interface OperatorRepository {
  /**
   * Accounts newest first, at most `limit`, those after the account `after` when given; with
   * `search`, only the account of that id and those whose subject contains it (any case).
   */
  searchAccounts(p: { search?: string; after?: string; limit: number }): Promise<AccountSummary[]>;
  /** Credits sold (purchases' grants) from `since` up to `until` (instants), per UTC day, oldest first; days without sales are absent. */
  soldPerDay(range: { since: string; until: string }): Promise<Array<{ day: string; soldMicro: number }>>;
}
