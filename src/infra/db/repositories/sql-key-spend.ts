/** What keys have spent in their budgets' periods: one statement over svc_committed_spend. */
import type { Database } from '../../../domain/ports/database';
import type { PeriodAmounts } from '../../../domain/credits/lease-store';
import type { KeySpendRepository } from '../../../domain/keys/key-spend';

type SpendRow = { id: string } & PeriodAmounts;

export class SqlKeySpend implements KeySpendRepository {
  constructor(private readonly db: Database) {}

  async committedSpend(keyIds: readonly string[]): Promise<{ at: Date; spent: Map<string, PeriodAmounts> }> {
    const row = await this.db.one<{ at: Date | string; spent: SpendRow[] | string }>(
      `select now() as at,
              (select coalesce(jsonb_agg(jsonb_build_object('id', k.id, 'day', c.day_micro, 'week', c.week_micro, 'month', c.month_micro)), '[]'::jsonb)
                 from unnest(?::text[]) as k(id)
                 cross join lateral svc_committed_spend(k.id, (now() at time zone 'UTC')::date) c) as spent`,
      [keyIds],
    );
    const rows = typeof row!.spent === 'string' ? (JSON.parse(row!.spent) as SpendRow[]) : row!.spent;
    return { at: new Date(row!.at), spent: new Map(rows.map((r) => [r.id, { day: Number(r.day), week: Number(r.week), month: Number(r.month) }])) };
  }
}
