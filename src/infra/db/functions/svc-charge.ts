/**
 * A charge straight to the balance (a video job's), within the key's budgets. Answers 0 charged,
 * 1 the balance was short, 2, 3, 4 past the day's, week's, month's budget (svc_budget_short).
 * Counts on the day of its ledger entry, which is the day its refund gives back to. Then the
 * account's low-balance alert (svc_balance_alert) and the key's budget thresholds
 * (svc_note_budget_crossings).
 */
export const SVC_CHARGE = {
  name: 'svc_charge',
  sql: `create or replace function svc_charge(p_account text, p_key text, p_day_budget bigint, p_week_budget bigint, p_month_budget bigint, p_amount bigint, p_reference text, p_reason text, p_model text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
      declare
        v_day date := (now() at time zone 'UTC')::date;
        s record;
        v_short integer;
      begin
        if p_amount <= 0 then return 0; end if;
        select * into s from svc_lock_key_spend(p_key, v_day);
        v_short := svc_budget_short(v_day, p_amount, p_day_budget - s.day_spent, p_week_budget - s.week_spent, p_month_budget - s.month_spent);
        if v_short > 0 then return v_short; end if;
        update accounts set balance_micro = balance_micro - p_amount where id = p_account and balance_micro >= p_amount;
        if not found then return 1; end if;
        perform svc_add_key_spend(p_key, v_day, p_amount);
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model)
          values (p_account, -p_amount, 'charge', p_reference, p_key, p_reason, p_model);
        perform svc_balance_alert(array[p_account], '{}');
        if coalesce(p_day_budget, p_week_budget, p_month_budget) is not null then
          perform svc_note_budget_crossings(p_key, v_day);
        end if;
        return 0;
      end $function$`,
};
