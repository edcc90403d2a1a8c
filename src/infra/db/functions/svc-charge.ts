/**
 * A charge straight to the balance (a video job's), within the key's daily cap. Answers 0 charged,
 * 1 the balance was short, 2 past the cap. Counts on the day of its ledger entry, which is the day
 * its refund gives back to. Then the account's low-balance alert (svc_balance_alert).
 */
export const SVC_CHARGE = {
  name: 'svc_charge',
  sql: `create or replace function svc_charge(p_account text, p_key text, p_cap bigint, p_amount bigint, p_reference text, p_reason text, p_model text, p_day date)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
      declare
        v_day date := (now() at time zone 'UTC')::date;
      begin
        if p_amount <= 0 then return 0; end if;
        if p_cap is not null and p_amount > p_cap then return 2; end if;
        insert into key_daily_spend as s (api_key_id, day, spent_micro) values (p_key, v_day, p_amount)
          on conflict (api_key_id, day) do update set spent_micro = s.spent_micro + excluded.spent_micro
          where p_cap is null or s.spent_micro + excluded.spent_micro <= p_cap;
        if not found then return 2; end if;
        update accounts set balance_micro = balance_micro - p_amount where id = p_account and balance_micro >= p_amount;
        if not found then
          update key_daily_spend set spent_micro = spent_micro - p_amount where api_key_id = p_key and day = v_day;
          return 1;
        end if;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model)
          values (p_account, -p_amount, 'charge', p_reference, p_key, p_reason, p_model);
        perform svc_balance_alert(array[p_account], '{}');
        return 0;
      end $function$`,
};
