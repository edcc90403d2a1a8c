/**
 * The low-balance alert, checked by every function that moves a balance shown, at its end, in its
 * transaction: `p_fell` the accounts whose balance went down, `p_rose` those whose balance went up.
 * An account whose balance shown (svc_shown_balance: a lease moves none of it) is below its
 * threshold, fell there and has not been told since it was last at or above it gets one
 * `balance.low` (svc_account_event, its occurrence the crossing's number); one at or above it
 * is armed again. Accounts without a threshold cost one index probe.
 *
 * Each account's alert row is locked, in account order, after every lock the money move took, and
 * nothing but new rows is written after it: checks of one account run one at a time, and each
 * reads the balance (in a statement after its lock) with every move checked before it committed,
 * so concurrent charges on any number of instances make one event per crossing.
 */
export const SVC_BALANCE_ALERT = {
  name: 'svc_balance_alert',
  sql: `create or replace function svc_balance_alert(p_fell text[], p_rose text[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
  declare
    a record;
    v_shown bigint;
  begin
    for a in select s.account_id, s.low_balance_micro, s.low_balance_below, s.low_balance_crossings
               from account_alerts s
              where s.account_id = any(p_fell || p_rose) and s.low_balance_micro is not null
              order by s.account_id
                for update loop
      v_shown := svc_shown_balance(a.account_id);
      if v_shown >= a.low_balance_micro then
        if a.low_balance_below then
          update account_alerts set low_balance_below = false where account_id = a.account_id;
        end if;
      elsif not a.low_balance_below and a.account_id = any(p_fell) then
        update account_alerts set low_balance_below = true, low_balance_crossings = low_balance_crossings + 1 where account_id = a.account_id;
        perform svc_account_event(a.account_id, 'balance.low', (a.low_balance_crossings + 1)::text, jsonb_build_object(
          'accountId', a.account_id,
          'balance', trim_scale(v_shown / 1000000.0),
          'lowBalanceAlert', trim_scale(a.low_balance_micro / 1000000.0)));
      end if;
    end loop;
  end $function$`,
};
