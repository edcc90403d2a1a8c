/**
 * The balance shown: the account row plus what its open leases have not charged (leased credits
 * are still the account's), less what an operator's pending removal will take from those leases.
 */
export const SVC_SHOWN_BALANCE = {
  name: 'svc_shown_balance',
  sql: `create or replace function svc_shown_balance(p_account text)
 RETURNS bigint
 LANGUAGE sql
 STABLE
AS $function$
  select a.balance_micro + coalesce(sum(u.unspent), 0)
         - least(a.removal_pending_micro, coalesce(sum(u.unspent) filter (where u.id = any(a.removal_leases)), 0))
    from accounts a
    left join lateral (select l.id, greatest(0, l.amount_micro - coalesce((select sum(c.amount_micro) from lease_charges c where c.lease_id = l.id), 0)) as unspent
                         from credit_leases l where l.account_id = a.id and l.closed_at is null) u on true
   where a.id = p_account
   group by a.id
$function$`,
};
