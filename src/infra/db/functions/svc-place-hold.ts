/**
 * A balance hold for a call (the older billing path; calls now reserve from credit leases), within
 * the key's budgets. Its work row releases it after p_expiry_seconds. Answers 0 held, 1 the
 * balance was short, 2, 3, 4 past the day's, week's, month's budget (svc_budget_short). Checks the
 * account's low-balance alert.
 */
export const SVC_PLACE_HOLD = {
  name: 'svc_place_hold',
  sql: `create or replace function svc_place_hold(p_account text, p_key text, p_day_budget bigint, p_week_budget bigint, p_month_budget bigint, p_amount bigint, p_hold text, p_day date, p_expiry_seconds double precision, p_payload jsonb, p_model text DEFAULT NULL::text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
      declare
        s record;
        v_short integer;
      begin
        select * into s from svc_lock_key_spend(p_key, p_day);
        v_short := svc_budget_short(p_day, p_amount, p_day_budget - s.day_spent, p_week_budget - s.week_spent, p_month_budget - s.month_spent);
        if v_short > 0 then return v_short; end if;
        update accounts set balance_micro = balance_micro - p_amount where id = p_account and balance_micro >= p_amount;
        if not found then return 1; end if;
        perform svc_add_key_spend(p_key, p_day, p_amount);
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model) values (p_account, -p_amount, 'hold', p_hold, p_key, p_model);
        insert into work_items (kind, ref, payload, due_at) values ('hold_expiry', p_hold, p_payload, now() + make_interval(secs => p_expiry_seconds));
        perform svc_balance_alert(array[p_account], '{}');
        return 0;
      end $function$`,
};
