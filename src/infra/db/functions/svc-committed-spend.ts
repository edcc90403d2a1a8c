/**
 * What a key's committed charges spent in the periods that hold `p_day`: each period's spend
 * (open leases counted whole) less what the key's open leases of that period hold uncharged. What
 * GET /v1/key shows as `spent`, what a refusal's true reason is read from, and what a budget's
 * thresholds are crossed by.
 */
export const SVC_COMMITTED_SPEND = {
  name: 'svc_committed_spend',
  sql: `create or replace function svc_committed_spend(p_key text, p_day date)
 RETURNS TABLE(day_micro bigint, week_micro bigint, month_micro bigint)
 LANGUAGE sql
 STABLE
AS $function$
  with periods as (
    select date_trunc('week', p_day::timestamp)::date as week, date_trunc('month', p_day::timestamp)::date as month
  ), open_leases as (
    select l.day, greatest(0, l.amount_micro - coalesce((select sum(c.amount_micro) from lease_charges c where c.lease_id = l.id), 0)) as unspent
      from credit_leases l where l.api_key_id = p_key and l.closed_at is null
  )
  select greatest(0, coalesce((select s.spent_micro from key_daily_spend s where s.api_key_id = p_key and s.day = p_day), 0)
                     - coalesce((select sum(o.unspent) from open_leases o where o.day = p_day), 0))::bigint,
         greatest(0, coalesce((select s.spent_micro from key_period_spend s where s.api_key_id = p_key and s.period = 'week' and s.starts = p.week), 0)
                     - coalesce((select sum(o.unspent) from open_leases o where o.day >= p.week and o.day < p.week + 7), 0))::bigint,
         greatest(0, coalesce((select s.spent_micro from key_period_spend s where s.api_key_id = p_key and s.period = 'month' and s.starts = p.month), 0)
                     - coalesce((select sum(o.unspent) from open_leases o where o.day >= p.month and o.day < (p.month + interval '1 month')::date), 0))::bigint
    from periods p
$function$`,
};
