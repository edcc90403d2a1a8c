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
  // Credit leases: what each has spent (its recorded charges) is within its amount, or what went
  // past it is shown as uncollected once it closed; a closed lease wrote its spend on its row and
  // returned the rest, once; an open one returned nothing.
  const leases = await db.all(
    `select l.id, l.amount_micro, l.spent_micro, coalesce(c.sum, 0) as charged, r.amount_micro as returned
       from credit_leases l
       left join (select lease_id, sum(amount_micro) as sum from lease_charges group by lease_id) c on c.lease_id = l.id
       left join ledger_entries r on r.kind = 'lease_return' and r.reference = l.id
       left join uncollected_charges u on u.request_id = l.id and u.reason = 'lease_overrun'
      where (l.closed_at is null and coalesce(c.sum, 0) > l.amount_micro)
         or (l.closed_at is not null and (l.spent_micro <> least(coalesce(c.sum, 0), l.amount_micro)
             or coalesce(u.amount_micro, 0) <> greatest(coalesce(c.sum, 0) - l.amount_micro, 0)
             or r.amount_micro is null or r.amount_micro <> l.amount_micro - l.spent_micro))
         or (l.closed_at is null and r.amount_micro is not null)`,
  );
  expect(leases).toEqual([]);
}
