/**
 * A balance hold for a call (the older billing path; calls now reserve from credit leases). Its
 * work row releases it after p_expiry_seconds. Checks the account's low-balance alert.
 */
export const SVC_PLACE_HOLD = {
  name: 'svc_place_hold',
  sql: `create or replace function svc_place_hold(p_account text, p_key text, p_cap bigint, p_amount bigint, p_hold text, p_day date, p_expiry_seconds double precision, p_payload jsonb, p_model text DEFAULT NULL::text)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
      begin
        -- 0 = held, 1 = insufficient credits, 2 = daily cap
        if p_cap is not null and p_amount > p_cap then return 2; end if;
        insert into key_daily_spend as s (api_key_id, day, spent_micro) values (p_key, p_day, p_amount)
          on conflict (api_key_id, day) do update set spent_micro = s.spent_micro + excluded.spent_micro
          where p_cap is null or s.spent_micro + excluded.spent_micro <= p_cap;
        if not found then return 2; end if;
        update accounts set balance_micro = balance_micro - p_amount where id = p_account and balance_micro >= p_amount;
        if not found then
          update key_daily_spend set spent_micro = spent_micro - p_amount where api_key_id = p_key and day = p_day;
          return 1;
        end if;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model) values (p_account, -p_amount, 'hold', p_hold, p_key, p_model);
        insert into work_items (kind, ref, payload, due_at) values ('hold_expiry', p_hold, p_payload, now() + make_interval(secs => p_expiry_seconds));
        perform svc_balance_alert(array[p_account], '{}');
        return 0;
      end $function$`,
};
