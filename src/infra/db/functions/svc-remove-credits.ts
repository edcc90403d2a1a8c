/**
 * An operator's removal: what the balance holds at once; the rest is noted on the account, with
 * its open leases, and taken from each as it closes (svc_close_lease); the balance shown drops by
 * all of it at once, and the account's low-balance alert is checked (svc_balance_alert). Locks the
 * account row, then its alert row.
 */
export const SVC_REMOVE_CREDITS = {
  name: 'svc_remove_credits',
  sql: `create or replace function svc_remove_credits(p_account text, p_amount bigint, p_reason text)
 RETURNS TABLE(taken bigint, pending bigint)
 LANGUAGE plpgsql
AS $function$
  declare
    v_balance bigint;
    v_take bigint;
    v_open text[];
  begin
    select balance_micro into v_balance from accounts where id = p_account for update;
    if not found then taken := 0; pending := 0; return next; return; end if;
    v_take := least(p_amount, v_balance);
    if v_take > 0 then
      update accounts set balance_micro = balance_micro - v_take where id = p_account;
      insert into ledger_entries (account_id, amount_micro, kind, reason) values (p_account, -v_take, 'grant', p_reason);
    end if;
    -- Leases whose close has not committed yet are read as open: a close waits for this row lock, then sweeps.
    select array_agg(id order by id) into v_open from credit_leases where account_id = p_account and closed_at is null;
    if p_amount > v_take and v_open is not null then
      update accounts
         set removal_pending_micro = removal_pending_micro + (p_amount - v_take),
             removal_reason = p_reason,
             removal_leases = array(select distinct x from unnest(removal_leases || v_open) as x order by x)
       where id = p_account;
    end if;
    taken := v_take;
    select removal_pending_micro into pending from accounts where id = p_account;
    perform svc_balance_alert(array[p_account], '{}');
    return next;
  end $function$`,
};
