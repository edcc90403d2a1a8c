/**
 * A credit lease of at least p_min, up to p_want (a quarter of the balance at most, and half of
 * what the key's daily cap leaves), debited from the balance and counted whole on the key's day
 * until it closes. Answers the amount, -1 when the balance cannot fund it, -2 past the cap. Counts
 * on the database's day (p_day is not read).
 */
export const SVC_TAKE_LEASE = {
  name: 'svc_take_lease',
  sql: `create or replace function svc_take_lease(p_lease text, p_account text, p_key text, p_cap bigint, p_min bigint, p_want bigint, p_day date, p_instance text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
      declare
        v_day date := (now() at time zone 'UTC')::date;
        v_spent bigint;
        v_balance bigint;
        v_amount bigint;
      begin
        insert into key_daily_spend (api_key_id, day, spent_micro) values (p_key, v_day, 0) on conflict do nothing;
        select spent_micro into v_spent from key_daily_spend where api_key_id = p_key and day = v_day for update;
        select balance_micro into v_balance from accounts where id = p_account for update;
        if v_balance is null then return -1; end if;
        v_amount := least(p_want, v_balance / 4);
        if p_cap is not null then v_amount := least(v_amount, (p_cap - v_spent) / 2); end if;
        v_amount := greatest(v_amount, p_min);
        if p_cap is not null and v_spent + v_amount > p_cap then return -2; end if;
        if v_balance < v_amount then return -1; end if;
        update key_daily_spend set spent_micro = spent_micro + v_amount where api_key_id = p_key and day = v_day;
        update accounts set balance_micro = balance_micro - v_amount where id = p_account;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id) values (p_account, -v_amount, 'lease', p_lease, p_key);
        insert into credit_leases (id, account_id, api_key_id, instance_id, day, amount_micro) values (p_lease, p_account, p_key, p_instance, v_day, v_amount);
        return v_amount;
      end $function$`,
};
