/**
 * Records a batch of charges (lease_charges.request_id is unique: a call is charged once). Charges
 * within open leases are one set-wise insert, the leases key-share-locked in id order (a close,
 * locking for update, counts them or makes them find it closed); the rest one by one: what lies
 * beyond a lease, or a charge whose lease closed (or was lost: status 2), from the balance as far
 * as it and the key's budgets go, the rest recorded as uncollected. An item may carry its call's request-log row
 * (`log`, without what the item says: an item is a logged call as svc_log_requests reads it): it
 * is written with the charge, in the same transaction, its credits what the item was charged. Then the low-balance alerts of the accounts charged
 * (svc_balance_alert), and last, a charge within a watched lease, or one that took from the
 * balance, is checked for the budget thresholds the key's spend crossed
 * (svc_note_budget_crossings); what it found is answered with the charge (`crossings`).
 */
export const SVC_RECORD_CHARGES = {
  name: 'svc_record_charges',
  sql: `create or replace function svc_record_charges(p_items jsonb)
 RETURNS TABLE(request_id text, status integer, charged bigint, crossings jsonb)
 LANGUAGE plpgsql
AS $function$
  declare
    it record;
    v_debit bigint;
    v_balance bigint;
    v_done text[];
    v_watched text[];
    v_from_lease bigint;
    v_excess bigint;
    v_converted bigint;
    v_charged bigint;
    v_day date;
    v_lost boolean := false;
    v_owner text;
    b record;
    ks record;
    v_room bigint;
    v_reason text;
    v_fell text[];
    v_rose text[] := '{}';
    -- Answered at the end, with what the checks found: [{r: request, s: status, c: charged}].
    v_results jsonb := '[]';
    -- Budget checks to make at the end: [{k: key, d: its lease's day, r: the request they are told with}].
    v_checks jsonb := '[]';
    v_found jsonb := '{}';
    v_crossed jsonb;
    w record;
  begin
    -- Charges within open leases (all but a rare few): one insert, the leases key-share-locked in id order.
    with items as (
        select y.request_id, y.lease_id, y.account_id, y.api_key_id, y.model, y.lease_micro
          from (select x.*, count(*) over (partition by x.request_id) as copies
                  from jsonb_to_recordset(p_items) as x(request_id text, lease_id text, account_id text, api_key_id text, model text,
                                                        lease_micro bigint, excess_micro bigint, waived_micro bigint)) y
         where y.excess_micro = 0 and coalesce(y.waived_micro, 0) = 0 and y.copies = 1
    ), open_leases as (
        -- Each lease looked up by its key, in id order: written as a join of the leases with
        -- the items, the plan cached for the session (made when the table was small) read
        -- every open lease through the open-lease index, 6,000 of them a call in the bench.
        select l.id, l.account_id, l.watched
          from (select distinct i.lease_id from items i order by 1) wanted
          cross join lateral (select c.id, c.account_id, c.watched from credit_leases c
                               where c.id = wanted.lease_id and c.closed_at is null for key share) l
    ), recorded as (
        insert into lease_charges (request_id, lease_id, account_id, api_key_id, model, amount_micro)
        select i.request_id, i.lease_id, i.account_id, i.api_key_id, i.model, i.lease_micro
          from items i join open_leases o on o.id = i.lease_id and o.account_id = i.account_id
        on conflict on constraint lease_charges_pkey do nothing
        returning lease_charges.request_id, lease_charges.lease_id, lease_charges.account_id, lease_charges.amount_micro
    )
    select coalesce(array_agg(r.request_id), '{}'), coalesce(array_agg(r.request_id) filter (where o.watched), '{}'),
           coalesce(array_agg(distinct r.account_id) filter (where r.amount_micro > 0), '{}')
      into v_done, v_watched, v_fell
      from recorded r join open_leases o on o.id = r.lease_id;
    perform svc_log_requests(p_items, v_done);
    return query
      select x.request_id, 0, x.lease_micro, null::jsonb
        from jsonb_to_recordset(p_items) as x(request_id text, lease_micro bigint)
       where x.request_id = any(v_done) and not (x.request_id = any(v_watched));
    if cardinality(v_done) = jsonb_array_length(p_items) and cardinality(v_watched) = 0 then
      if cardinality(v_fell) > 0 then perform svc_balance_alert(v_fell, '{}'); end if;
      return;
    end if;
    -- Those within watched leases are answered once checked.
    select coalesce(jsonb_agg(jsonb_build_object('r', x.request_id, 's', 0, 'c', x.lease_micro)), '[]'),
           coalesce(jsonb_agg(jsonb_build_object('k', x.api_key_id, 'd', l.day, 'r', x.request_id)), '[]')
      into v_results, v_checks
      from jsonb_to_recordset(p_items) as x(request_id text, lease_id text, api_key_id text, lease_micro bigint)
      join credit_leases l on l.id = x.lease_id
     where x.request_id = any(v_watched);

    -- The rest, one by one: a charge beyond its lease, one recorded before, one on a closed lease.
    for it in
      select x.request_id as rid, x.lease_id as lid, x.account_id as aid, x.api_key_id as kid, x.model as mdl,
             x.lease_micro as lease_part, x.excess_micro as excess, coalesce(x.waived_micro, 0) as waived, x.log as log_row
        from jsonb_to_recordset(p_items) as x(request_id text, lease_id text, account_id text, api_key_id text, model text,
                                               lease_micro bigint, excess_micro bigint, waived_micro bigint, log jsonb)
       where not (x.request_id = any(v_done))
       order by x.lease_id, x.request_id
    loop
      v_converted := null;
      v_debit := 0;
      v_lost := false;
      if exists (select 1 from lease_charges c where c.request_id = it.rid) then
        -- Recorded before: a no-op, unless it is a stream whose lease was closed while it ran
        -- (its instance looked dead) and charged its prompt then: what the answer cost beyond
        -- that is charged now, from the balance, as a late charge is.
        delete from stream_starts s where s.request_id = it.rid and s.converted_micro is not null
          returning s.converted_micro into v_converted;
        if v_converted is null then
          if it.log_row is not null then
            perform svc_log_requests(jsonb_build_array(jsonb_build_object('request_id', it.rid, 'account_id', it.aid, 'api_key_id', it.kid,
                                                                          'model', it.mdl, 'credits_micro', 0, 'log', it.log_row)));
          end if;
          v_results := v_results || jsonb_build_array(jsonb_build_object('r', it.rid, 's', 0, 'c', 0));
          continue;
        end if;
        v_from_lease := 0;
        v_excess := greatest(0, it.lease_part + it.excess - v_converted);
        v_charged := 0;
        -- The estimate charged at the close was more than the usage: the rest goes back, once.
        if v_converted > it.lease_part + it.excess then
          insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model)
            values (it.aid, v_converted - (it.lease_part + it.excess), 'refund', it.rid, it.kid,
                    'usage below the estimate charged when its lease closed', it.mdl)
            on conflict do nothing;
          if found then
            v_rose := v_rose || it.aid;
            select l.day into v_day from credit_leases l where l.id = it.lid;
            perform svc_add_key_spend(it.kid, v_day, -(v_converted - (it.lease_part + it.excess)));
            update accounts set balance_micro = balance_micro + (v_converted - (it.lease_part + it.excess)) where id = it.aid;
          end if;
        end if;
      else
        v_from_lease := it.lease_part;
        v_excess := it.excess;
        perform 1 from credit_leases where id = it.lid and account_id = it.aid and closed_at is null for key share;
        if not found then
          select l.account_id into v_owner from credit_leases l where l.id = it.lid;
          if not found then
            -- No such lease at all: its take (committed without waiting for its WAL, svc_take_lease)
            -- was lost in a crash of the database, with the balance's debit. The call was answered:
            -- all of it is paid from the balance, once (its request id locked, then looked for in
            -- the ledger, as no lease_charges row can name the lease), and the answer says so (2).
            perform pg_advisory_xact_lock(hashtextextended('svc_lost_lease_charge:' || it.rid, 0));
            if exists (select 1 from ledger_entries e where e.kind = 'charge' and e.reference = it.rid)
               or exists (select 1 from uncollected_charges u where u.request_id = it.rid) then
              v_results := v_results || jsonb_build_array(jsonb_build_object('r', it.rid, 's', 2, 'c', 0));
              continue;
            end if;
            v_lost := true;
          elsif v_owner <> it.aid then
            -- Another account's lease: refused, nothing written.
            v_results := v_results || jsonb_build_array(jsonb_build_object('r', it.rid, 's', 1, 'c', 0));
            continue;
          end if;
          -- Closed (its unused part already back in the balance) or lost: the call was answered,
          -- so all of it is charged from the balance, as an excess is.
          v_from_lease := 0;
          v_excess := it.lease_part + it.excess;
        end if;
        if not v_lost then
          insert into lease_charges (request_id, lease_id, account_id, api_key_id, model, amount_micro)
            values (it.rid, it.lid, it.aid, it.kid, it.mdl, v_from_lease);
        end if;
        v_charged := v_from_lease;
      end if;
      -- A lost lease's day is the database's today, as its take's was.
      v_day := coalesce((select l.day from credit_leases l where l.id = it.lid), (now() at time zone 'UTC')::date);
      if v_excess > 0 then
        -- The key's spend rows (its lease's day, week and month) locked before the balance, in svc_take_lease's order.
        select k.daily_spend_cap_micro as day_budget, k.week_budget_micro as week_budget, k.month_budget_micro as month_budget into b
          from api_keys k where k.id = it.kid;
        select * into ks from svc_lock_key_spend(it.kid, v_day);
        select balance_micro into v_balance from accounts where id = it.aid for update;
        v_debit := least(v_excess, greatest(v_balance, 0));
        v_reason := 'balance';
        -- Nor past a budget of the key: what a budget leaves out is the operator's, as what the balance cannot cover is.
        -- least() passes over the budgets the key does not have (null); with none, the room is null.
        v_room := least(b.day_budget - ks.day_spent, b.week_budget - ks.week_spent, b.month_budget - ks.month_spent);
        if v_room < v_debit then
          v_debit := greatest(v_room, 0);
          v_reason := case when v_room = b.day_budget - ks.day_spent then 'daily_cap'
                           when v_room = b.week_budget - ks.week_spent then 'week_budget'
                           else 'month_budget' end;
        end if;
        if v_debit > 0 then
          update accounts set balance_micro = balance_micro - v_debit where id = it.aid;
          insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model)
            values (it.aid, -v_debit, 'charge', it.rid, it.kid, it.mdl);
          -- What the key spent beyond its lease counts on its periods too (those of the lease's day).
          perform svc_add_key_spend(it.kid, v_day, v_debit);
          v_charged := v_charged + v_debit;
        end if;
        if v_excess > v_debit then
          insert into uncollected_charges (request_id, account_id, api_key_id, model, amount_micro, reason)
            values (it.rid, it.aid, it.kid, it.mdl, v_excess - v_debit, v_reason);
        end if;
      end if;
      -- A call answered while the database was away, charged what its lease held: the rest, never promised, is the operator's.
      if it.waived > 0 and v_converted is null then
        insert into uncollected_charges (request_id, account_id, api_key_id, model, amount_micro, reason)
          values (it.rid, it.aid, it.kid, it.mdl, it.waived, 'database_unavailable')
          on conflict on constraint uncollected_charges_pkey do update set amount_micro = uncollected_charges.amount_micro + excluded.amount_micro;
      end if;
      v_results := v_results || jsonb_build_array(jsonb_build_object('r', it.rid, 's', case when v_lost then 2 else 0 end, 'c', v_charged));
      if v_charged > 0 then
        v_fell := v_fell || it.aid;
        v_checks := v_checks || jsonb_build_array(jsonb_build_object('k', it.kid, 'd', v_day, 'r', it.rid));
      end if;
      -- The call's row says all it cost: a stream charged its estimate at its lease's close adds that (less what went back).
      if it.log_row is not null then
        perform svc_log_requests(jsonb_build_array(jsonb_build_object('request_id', it.rid, 'account_id', it.aid, 'api_key_id', it.kid, 'model', it.mdl,
          'credits_micro', case when v_converted is null then v_charged else least(v_converted, it.lease_part + it.excess) + v_debit end,
          'log', it.log_row)));
      end if;
    end loop;
    if cardinality(v_fell) + cardinality(v_rose) > 0 then perform svc_balance_alert(v_fell, v_rose); end if;

    -- Last, once every charge is written and the alert rows locked: the budget thresholds crossed,
    -- each told with one request of its key and day (they write only new rows).
    for w in
      select distinct on (c.k, c.d) c.k, c.d, c.r from jsonb_to_recordset(v_checks) as c(k text, d date, r text) order by c.k, c.d, c.r
    loop
      v_crossed := svc_note_budget_crossings(w.k, w.d);
      if v_crossed is not null then v_found := v_found || jsonb_build_object(w.r, v_crossed); end if;
    end loop;
    return query select x.r, x.s, x.c, v_found -> x.r from jsonb_to_recordset(v_results) as x(r text, s integer, c bigint);
  end $function$`,
};
