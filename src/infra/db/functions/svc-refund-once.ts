/**
 * Gives a charge back exactly once (a failed job's; the refund entry is unique per reference), to
 * the balance and to the key's spend in the periods of its charge's day, arming the account's
 * low-balance alert again when it rose past it. True when this call refunded it.
 */
export const SVC_REFUND_ONCE = {
  name: 'svc_refund_once',
  sql: `create or replace function svc_refund_once(p_account text, p_reference text, p_reason text)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
      declare
        v_amount bigint;
        v_key text;
        v_day date;
        v_model text;
      begin
        select -sum(amount_micro), max(api_key_id), (min(created_at) at time zone 'UTC')::date, max(model)
          into v_amount, v_key, v_day, v_model
          from ledger_entries where kind = 'charge' and reference = p_reference and account_id = p_account;
        if v_amount is null or v_amount <= 0 then return false; end if;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model)
          values (p_account, v_amount, 'refund', p_reference, v_key, p_reason, v_model) on conflict do nothing;
        if not found then return false; end if;
        if v_key is not null then
          perform svc_add_key_spend(v_key, v_day, -v_amount);
        end if;
        update accounts set balance_micro = balance_micro + v_amount where id = p_account;
        perform svc_balance_alert('{}', array[p_account]);
        return true;
      end $function$`,
};
