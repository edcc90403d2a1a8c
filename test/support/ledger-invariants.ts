import type { Database } from '../../src/domain/ports/database';

/**
 * The ledger invariants every money test ends with: each balance equals the sum of its entries,
 * none is negative, and no reference was refunded or released twice.
 */
export async function expectLedgerInvariants(db: Database): Promise<void> {
  const drift = await db.all<{ id: string; balance_micro: string; sum: string }>(
    `select a.id, a.balance_micro, coalesce(sum(e.amount_micro), 0) as sum
       from accounts a left join ledger_entries e on e.account_id = a.id
      group by a.id, a.balance_micro
     having a.balance_micro <> coalesce(sum(e.amount_micro), 0) or a.balance_micro < 0`,
  );
  expect(drift).toEqual([]);
  const doubled = await db.all(
    `select kind, reference, count(*) from ledger_entries where kind in ('refund', 'release') group by kind, reference having count(*) > 1`,
  );
  expect(doubled).toEqual([]);
}
