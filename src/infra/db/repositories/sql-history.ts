import type { Database } from '../../../domain/ports/database';
import type { EntryKind } from '../../../domain/credits/ledger';
import type { HistoryRepository } from '../../../domain/history/history-repository';
import type { LedgerEntry } from '../../../domain/history/ledger-entries';
import type { UsageBucket, UsageGroupBy } from '../../../domain/history/usage';
import { microToCredits } from '../../../domain/shared/money';

interface Row {
  id: string | number;
  kind: EntryKind;
  amount_micro: string | number;
  reference: string | null;
  api_key_id: string | null;
  model: string | null;
  reason: string | null;
  created_at: Date | string;
}

/** Statements and usage read from `ledger_entries` and `lease_charges`. */
export class SqlHistoryRepository implements HistoryRepository {
  constructor(private readonly db: Database) {}

  async ledgerEntries(accountId: string, p: { after?: string; limit: number }): Promise<LedgerEntry[]> {
    // The statement a user reads: each call paid from a credit lease is a charge of its own (the
    // lease and its return are the gateway's bookkeeping, left out; a late charge's row of 0 is
    // too, its `charge` entry says what it cost), so the entries sum to the
    // balance shown. Both tables draw ids from one sequence, hence one order and one cursor.
    const after = p.after ? 'and id < ?::bigint' : '';
    const page = p.after ? [p.after] : [];
    const params = [accountId, ...page, accountId, ...page, p.limit];
    const rows = await this.db.all<Row>(
      `select * from (
       select id, kind, amount_micro, reference, api_key_id, model, reason, created_at from ledger_entries
        where account_id = ? and kind not in ('lease', 'lease_return') ${after}
       union all
       select id, 'charge', -amount_micro, request_id, api_key_id, model, null, created_at from lease_charges
        where account_id = ? and amount_micro > 0 ${after}) as statement
      order by id desc limit ?`,
      params,
    );
    return rows.map((r): LedgerEntry => ({
      id: String(r.id),
      kind: r.kind,
      credits: microToCredits(r.amount_micro),
      reference: r.reference,
      keyId: r.api_key_id,
      model: r.model,
      reason: r.reason,
      created: new Date(r.created_at),
    }));
  }

  async spending(accountId: string | null, range: { since: string; until: string; groupBy: UsageGroupBy }): Promise<UsageBucket[]> {
    const keyCol = range.groupBy === 'key' ? 'api_key_id' : 'null';
    const modelCol = range.groupBy === 'model' ? 'model' : 'null';
    const { since, until: end } = range;
    // One account's, or (null) every account's: the same rule either way.
    const of = (alias: string) => (accountId === null ? 'true' : `${alias}account_id = ?`);
    const who = accountId === null ? [] : [accountId];
    const rows = await this.db.all<{ day: string; key_id: string | null; model: string | null; spent: string | number }>(
      `select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, ${keyCol} as key_id, ${modelCol} as model, -sum(amount_micro) as spent
       from (select created_at, api_key_id, model, amount_micro from ledger_entries
              where ${of('')} and kind = 'charge' and created_at >= ?::timestamptz and created_at < ?::timestamptz
             union all
             -- Refunds come after their charges: those since the range began, placed at their charge.
             select coalesce(c.created_at, r.created_at), coalesce(c.api_key_id, r.api_key_id), coalesce(c.model, r.model), r.amount_micro
               from ledger_entries r
               left join ledger_entries c on c.kind = 'charge' and c.reference = r.reference and c.account_id = r.account_id
              where ${of('r.')} and r.kind = 'refund' and r.created_at >= ?::timestamptz
                and coalesce(c.created_at, r.created_at) >= ?::timestamptz and coalesce(c.created_at, r.created_at) < ?::timestamptz
             union all
             -- Calls paid from credit leases: each is a charge of its lease (see lease_charges).
             select created_at, api_key_id, model, -amount_micro from lease_charges
              where ${of('')} and created_at >= ?::timestamptz and created_at < ?::timestamptz) as spending
      group by 1, 2, 3 order by 1, 2, 3`,
      [...who, since, end, ...who, since, since, end, ...who, since, end],
    );
    return rows.map((r) => ({ day: r.day, keyId: r.key_id, model: r.model, credits: microToCredits(r.spent) }));
  }
}
