import type { LedgerEntry } from './ledger-entries';
import type { UsageBucket, UsageGroupBy } from './usage';

/** What an owner's statements are read from: the ledger and the charges paid from credit leases. Its SQL: infra/db/repositories/sql-history.ts. */
export interface HistoryRepository {
  /**
   * The account's statement, newest first, at most `limit` entries, those older than the entry
   * `after` when given: each call paid from a credit lease is a charge of its own, and the
   * leases and their returns are left out, so the entries sum to the balance shown.
   */
  ledgerEntries(accountId: string, page: { after?: string; limit: number }): Promise<LedgerEntry[]>;
  /**
   * Credits spent from `since` up to `until` (instants), per UTC day and `groupBy`, oldest first:
   * charges (direct and paid from leases) net of their refunds, a refund counted with its charge.
   * `accountId` null: every account's together (the operator's daily totals).
   */
  spending(accountId: string | null, range: { since: string; until: string; groupBy: UsageGroupBy }): Promise<UsageBucket[]>;
}
