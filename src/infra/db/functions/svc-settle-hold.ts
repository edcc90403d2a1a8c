/**
 * Settles a balance hold: charges what the call cost (at most the hold) and gives the rest back,
 * once, to the balance and to the key's spend in the periods of the hold's day; what came back may
 * arm the account's low-balance alert again.
 */
export const SVC_SETTLE_HOLD = {
  name: 'svc_settle_hold',
  sql: `create or replace function svc_settle_hold(p_account text, p_key text, p_hold text, p_actual bigint)
 RETURNS boolean
 LANGUAGE plpgsql
AS $function$
      declare
        v_held bigint;
        v_day date;
        v_model text;
        v_charge bigint;
      begin
        select -amount_micro, (created_at at time zone 'UTC')::date, model into v_held, v_day, v_model
          from ledger_entries where kind = 'hold' and reference = p_hold and account_id = p_account;
        if not found then return false; end if;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model) values (p_account, v_held, 'release', p_hold, p_key, v_model)
          on conflict do nothing;
        if not found then return false; end if;
        v_charge := least(greatest(p_actual, 0), v_held);
        if v_held - v_charge > 0 then
          perform svc_add_key_spend(p_key, v_day, -(v_held - v_charge));
          update accounts set balance_micro = balance_micro + (v_held - v_charge) where id = p_account;
        end if;
        if v_charge > 0 then
          insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model) values (p_account, -v_charge, 'charge', p_hold, p_key, v_model);
        end if;
        delete from work_items where kind = 'hold_expiry' and ref = p_hold;
        if v_held - v_charge > 0 then perform svc_balance_alert('{}', array[p_account]); end if;
        return true;
      end $function$`,
};
