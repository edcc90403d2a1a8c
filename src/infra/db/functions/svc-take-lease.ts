/**
 * A credit lease of at least p_min, up to p_want (a quarter of the balance at most, and half of
 * the room each budget of the key leaves), debited from the balance and counted whole on the
 * key's day, week and month until it closes. Answers the amount leased and whether the lease is
 * watched (budget-crossings.ts); the amount is -1 when the balance cannot fund it, -2, -3, -4 past
 * the day's, week's, month's budget (svc_budget_short). Counts on the database's day. Does not
 * wait for its WAL flush (a cold key's call waits on one commit to disk, its charge's, not two).
 */
export const SVC_TAKE_LEASE = {
  name: 'svc_take_lease',
  sql: `create or replace function svc_take_lease(p_lease text, p_account text, p_key text, p_day_budget bigint, p_week_budget bigint, p_month_budget bigint, p_min bigint, p_want bigint, p_instance text)
 RETURNS TABLE(leased bigint, watch boolean)
 LANGUAGE plpgsql
AS $function$
      declare
        v_day date := (now() at time zone 'UTC')::date;
        s record;
        v_short integer;
        v_balance bigint;
      begin
        -- Committed without waiting for its WAL to reach the disk: the call's charge, a synchronous
        -- commit after it, flushes the WAL past this take before the call is answered. A crash of
        -- the database before then loses the take whole (the balance never debited); the call's
        -- charge then finds no such lease and is paid from the balance (svc_record_charges).
        perform set_config('synchronous_commit', 'off', true);
        watch := false;
        select * into s from svc_lock_key_spend(p_key, v_day);
        select balance_micro into v_balance from accounts where id = p_account for update;
        if v_balance is null then leased := -1; return next; return; end if;
        -- least() passes over the budgets the key does not have (null).
        leased := greatest(least(p_want, v_balance / 4, (p_day_budget - s.day_spent) / 2, (p_week_budget - s.week_spent) / 2,
                                 (p_month_budget - s.month_spent) / 2), p_min);
        v_short := svc_budget_short(v_day, leased, p_day_budget - s.day_spent, p_week_budget - s.week_spent, p_month_budget - s.month_spent);
        if v_short > 0 then leased := -v_short; return next; return; end if;
        if v_balance < leased then leased := -1; return next; return; end if;
        -- At 80% of a budget or more, this lease counted whole, its charges may cross a threshold.
        watch := coalesce((s.day_spent + leased) * 5 >= p_day_budget * 4 or (s.week_spent + leased) * 5 >= p_week_budget * 4
                          or (s.month_spent + leased) * 5 >= p_month_budget * 4, false);
        perform svc_add_key_spend(p_key, v_day, leased);
        update accounts set balance_micro = balance_micro - leased where id = p_account;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id) values (p_account, -leased, 'lease', p_lease, p_key);
        insert into credit_leases (id, account_id, api_key_id, instance_id, day, amount_micro, watched)
          values (p_lease, p_account, p_key, p_instance, v_day, leased, watch);
        return next;
      end $function$`,
};
