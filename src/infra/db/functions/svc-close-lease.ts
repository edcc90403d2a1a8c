/**
 * Closes a lease: gives back its amount less its recorded charges (after charging its unsettled
 * streams what they owed, within the lease), takes the key's spend in the periods of the lease's
 * day down by what came back, lets an operator's pending removal take its share, and notes the
 * budget thresholds the key's spend has crossed (svc_note_budget_crossings: one made within this
 * lease while it was not watched is found here). Answers what came back, -1 when it was closed
 * already. Locks the lease row, then the key's spend rows, then the account row; when streams
 * were charged, the account's alert row (svc_balance_alert) before the thresholds' new rows.
 */
export const SVC_CLOSE_LEASE = {
  name: 'svc_close_lease',
  sql: `create or replace function svc_close_lease(p_lease text)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
  declare
    l credit_leases%rowtype;
    v_back bigint;
    v_part bigint;
    v_swept bigint;
    v_streams bigint := 0;
    a record;
    s record;
  begin
    select * into l from credit_leases where id = p_lease for update;
    if not found or l.closed_at is not null then return -1; end if;
    -- Every charge that key-share-locked the row before this lock has committed: the sum counts it.
    v_back := l.amount_micro - (select coalesce(sum(c.amount_micro), 0) from lease_charges c where c.lease_id = p_lease);
    if v_back < 0 then
      insert into uncollected_charges (request_id, account_id, api_key_id, model, amount_micro, reason)
        values (p_lease, l.account_id, l.api_key_id, null, -v_back, 'lease_overrun') on conflict do nothing;
      v_back := 0;
    end if;
    -- Streams of this lease that never settled: each is charged what it owed when last written, within the lease.
    for s in select * from stream_starts where lease_id = p_lease and converted_micro is null order by request_id for update loop
      if exists (select 1 from lease_charges c where c.request_id = s.request_id) then
        delete from stream_starts where request_id = s.request_id;
        continue;
      end if;
      v_part := least(s.owed_micro, v_back);
      insert into lease_charges (request_id, lease_id, account_id, api_key_id, model, amount_micro)
        values (s.request_id, p_lease, l.account_id, s.api_key_id, s.model, v_part);
      update stream_starts set converted_micro = v_part where request_id = s.request_id;
      v_back := v_back - v_part;
      v_streams := v_streams + v_part;
    end loop;
    update credit_leases set closed_at = now(), spent_micro = amount_micro - v_back where id = p_lease;
    if v_back > 0 then
      perform svc_add_key_spend(l.api_key_id, l.day, -v_back);
    end if;
    -- The account row, locked after the lease row as before; what a removal noted on it is read under the lock.
    select removal_pending_micro, removal_reason, removal_leases into a from accounts where id = l.account_id for update;
    if v_back > 0 then
      update accounts set balance_micro = balance_micro + v_back where id = l.account_id;
    end if;
    insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id) values (l.account_id, v_back, 'lease_return', p_lease, l.api_key_id);
    -- An operator's removal noted this lease: it takes from what came back, up to what it still wants.
    if p_lease = any(a.removal_leases) then
      v_swept := least(v_back, a.removal_pending_micro);
      if v_swept > 0 then
        update accounts set balance_micro = balance_micro - v_swept where id = l.account_id;
        insert into ledger_entries (account_id, amount_micro, kind, reference, reason) values (l.account_id, -v_swept, 'grant', p_lease, a.removal_reason);
      end if;
      update accounts
         set removal_leases = array_remove(removal_leases, p_lease),
             removal_pending_micro = case when cardinality(array_remove(removal_leases, p_lease)) = 0 then 0 else removal_pending_micro - v_swept end,
             removal_reason = case when cardinality(array_remove(removal_leases, p_lease)) = 0 then null else removal_reason end
       where id = l.account_id;
    end if;
    -- A return moves no balance shown; the streams charged here do.
    if v_streams > 0 then perform svc_balance_alert(array[l.account_id], '{}'); end if;
    perform svc_note_budget_crossings(l.api_key_id, l.day);
    return v_back;
  end $function$`,
};
