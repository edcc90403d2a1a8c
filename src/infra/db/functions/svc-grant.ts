/**
 * A grant (an operator's, a purchase's), or a removal of what the balance holds (never below
 * zero): the balance and its ledger entry together, then the account's low-balance alert
 * (svc_balance_alert). `p_reference` names what the entry is for (a purchase's Checkout Session;
 * null for an operator's): a unique index makes a positive grant once per reference. Answers
 * what was applied.
 */
export const SVC_GRANT = {
  name: 'svc_grant',
  sql: `create or replace function svc_grant(p_account text, p_amount bigint, p_reason text, p_reference text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
      declare
        v_applied bigint := p_amount;
        v_balance bigint;
      begin
        if v_applied < 0 then
          select balance_micro into v_balance from accounts where id = p_account for update;
          v_applied := -least(-v_applied, coalesce(v_balance, 0));
        end if;
        if v_applied = 0 then return 0; end if;
        update accounts set balance_micro = balance_micro + v_applied where id = p_account;
        insert into ledger_entries (account_id, amount_micro, kind, reference, reason) values (p_account, v_applied, 'grant', p_reference, p_reason);
        if v_applied < 0 then perform svc_balance_alert(array[p_account], '{}');
        else perform svc_balance_alert('{}', array[p_account]);
        end if;
        return v_applied;
      end $function$`,
};
