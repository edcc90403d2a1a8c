import { Migration } from '@mikro-orm/migrations';

/**
 * The balance shown, in one place: the account row plus what its open leases have not charged
 * (credits leased to instances are still the account's), less what an operator's removal will
 * take from those leases as they close. Read by the account's views and by the shortfall path,
 * which tells a balance that is short from one whose room calls in progress hold.
 */
export const SHOWN_BALANCE_SQL = `create or replace function svc_shown_balance(p_account text) returns bigint language sql stable as $$
  select a.balance_micro + coalesce(sum(u.unspent), 0)
         - least(a.removal_pending_micro, coalesce(sum(u.unspent) filter (where u.id = any(a.removal_leases)), 0))
    from accounts a
    left join lateral (select l.id, greatest(0, l.amount_micro - coalesce((select sum(c.amount_micro) from lease_charges c where c.lease_id = l.id), 0)) as unspent
                         from credit_leases l where l.account_id = a.id and l.closed_at is null) u on true
   where a.id = p_account
   group by a.id
$$`;

export class Migration20261205000100 extends Migration {
  async up(): Promise<void> {
    this.addSql(SHOWN_BALANCE_SQL);
  }

  async down(): Promise<void> {
    this.addSql(`drop function svc_shown_balance(text)`);
  }
}
