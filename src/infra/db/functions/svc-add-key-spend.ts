/**
 * Moves a key's spend in the periods that hold `p_day` by `p_amount` (negative: what came back),
 * never below 0: the day's row, then its week's, then its month's, in svc_lock_key_spend's order.
 */
export const SVC_ADD_KEY_SPEND = {
  name: 'svc_add_key_spend',
  sql: `create or replace function svc_add_key_spend(p_key text, p_day date, p_amount bigint)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
      begin
        update key_daily_spend set spent_micro = greatest(0, spent_micro + p_amount) where api_key_id = p_key and day = p_day;
        update key_period_spend set spent_micro = greatest(0, spent_micro + p_amount)
         where api_key_id = p_key and period = 'week' and starts = date_trunc('week', p_day::timestamp)::date;
        update key_period_spend set spent_micro = greatest(0, spent_micro + p_amount)
         where api_key_id = p_key and period = 'month' and starts = date_trunc('month', p_day::timestamp)::date;
      end $function$`,
};
