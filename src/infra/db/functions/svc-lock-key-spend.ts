/**
 * A key's spend rows for the periods that hold `p_day` (the day's, its week's from Monday, its
 * month's from the 1st), made when missing and locked in that order: every function that checks
 * or moves a key's spend against its budgets locks them so, before the account row. Answers what
 * each counts (open leases whole).
 */
export const SVC_LOCK_KEY_SPEND = {
  name: 'svc_lock_key_spend',
  sql: `create or replace function svc_lock_key_spend(p_key text, p_day date)
 RETURNS TABLE(day_spent bigint, week_spent bigint, month_spent bigint)
 LANGUAGE plpgsql
AS $function$
      declare
        v_week date := date_trunc('week', p_day::timestamp)::date;
        v_month date := date_trunc('month', p_day::timestamp)::date;
      begin
        insert into key_daily_spend (api_key_id, day, spent_micro) values (p_key, p_day, 0) on conflict do nothing;
        insert into key_period_spend (api_key_id, period, starts, spent_micro) values (p_key, 'week', v_week, 0), (p_key, 'month', v_month, 0)
          on conflict do nothing;
        select s.spent_micro into day_spent from key_daily_spend s where s.api_key_id = p_key and s.day = p_day for update;
        select s.spent_micro into week_spent from key_period_spend s where s.api_key_id = p_key and s.period = 'week' and s.starts = v_week for update;
        select s.spent_micro into month_spent from key_period_spend s where s.api_key_id = p_key and s.period = 'month' and s.starts = v_month for update;
        return next;
      end $function$`,
};
