import type { Database } from '../../../domain/ports/database';
import type { AccountSummary, OperatorRepository } from '../../../domain/operators/operator-repository';
import { toAccountSummary, type AccountSummaryRow } from './sql-account-repository';

/** `%`, `_` and `\` in a search are literal characters, not patterns. */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Reads across accounts, for operators only. */
export class SqlOperatorReads implements OperatorRepository {
  constructor(private readonly db: Database) {}

  async searchAccounts(p: { search?: string; after?: string; limit: number }): Promise<AccountSummary[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (p.search !== undefined) {
      where.push(`(a.id = ? or a.subject ilike ? escape '\\')`);
      params.push(p.search, `%${likeLiteral(p.search)}%`);
    }
    if (p.after !== undefined) {
      // Newest first by (created, id): the page after the account `after` (none such: an empty page).
      where.push(`(a.created_at, a.id) < (select c.created_at, c.id from accounts c where c.id = ?)`);
      params.push(p.after);
    }
    // Credits leased to instances and not yet charged are still the account's (svc_shown_balance).
    const rows = await this.db.all<AccountSummaryRow>(
      `select a.id, a.issuer, a.subject, a.member, a.created_at, svc_shown_balance(a.id) as balance_micro
         from accounts a ${where.length ? `where ${where.join(' and ')}` : ''}
        order by a.created_at desc, a.id desc limit ?`,
      [...params, p.limit],
    );
    return rows.map(toAccountSummary);
  }

  async soldPerDay(range: { since: string; until: string }): Promise<Array<{ day: string; soldMicro: number }>> {
    // A purchase's grant is the grant entry naming its purchase (its Checkout Session); its
    // refunds' take-backs are negative and not sales.
    const rows = await this.db.all<{ day: string; sold: string | number }>(
      `select to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD') as day, sum(e.amount_micro) as sold
         from ledger_entries e
        where e.kind = 'grant' and e.amount_micro > 0 and e.created_at >= ?::timestamptz and e.created_at < ?::timestamptz
          and exists (select 1 from purchases p where p.id = e.reference)
        group by 1 order by 1`,
      [range.since, range.until],
    );
    return rows.map((r) => ({ day: r.day, soldMicro: Number(r.sold) }));
  }
}
