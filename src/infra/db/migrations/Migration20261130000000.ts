import { Migration } from '@mikro-orm/migrations';
import { CLOSE_LEASE_SQL } from './Migration20261126000000';
import { RECORD_CHARGES_CAPPED_SQL } from './Migration20261128000000';

/**
 * A lease's spend is the sum of its charges, counted once, when it closes. Until now every billed
 * call also updated its lease row (`spent_micro`, `heartbeat_at`) in the charge's transaction:
 * a second write beside the charge's insert, and the one write per call that a plain
 * pass-through which records its charges does not make. Now a charge within an open lease is one
 * insert, guarded by a key-share lock on the lease row (which a close, locking the row for
 * update, waits for), and `svc_close_lease` counts the lease's charges to give the rest back.
 * A key-share lock, the weakest there is: it conflicts with the close's `for update` and little
 * else.
 *
 * Why the lock keeps the money exact: a close locks the lease row for update and then sums
 * its charges in a new snapshot. A charge that locked the row first commits before the close can
 * lock it, so the sum counts it; one that comes after waits for the close, then finds the lease
 * closed and goes the way of any charge on a closed lease (all of it from the balance, as a late
 * charge). No charge is lost between the two.
 *
 * `spent_micro` is now written when the lease closes (its final spend); an open lease's spend is
 * the sum of its `lease_charges`. Its bound (never more than the lease's amount) is kept by the
 * instance's lease book, which only hands out what the lease has free; should a close ever find
 * more charged than the lease held, the overrun is recorded as uncollected (reason
 * `lease_overrun`) for the operator to see, and nothing is given back.
 *
 * The lease's heartbeat no longer rides on its charges: it is its holder's (migration
 * 20261201000000, one row per instance).
 */
export const RECORD_CHARGES_SQL = `create or replace function svc_record_charges(p_items jsonb)
    returns table (request_id text, status int, charged bigint) language plpgsql as $$
  declare
    it record;
    v_debit bigint;
    v_balance bigint;
    v_done text[];
    v_from_lease bigint;
    v_excess bigint;
    v_converted bigint;
    v_day date;
    v_cap bigint;
    v_spent bigint;
    v_reason text;
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
        select l.id, l.account_id
          from (select distinct i.lease_id from items i order by 1) wanted
          cross join lateral (select c.id, c.account_id from credit_leases c
                               where c.id = wanted.lease_id and c.closed_at is null for key share) l
    ), recorded as (
        insert into lease_charges (request_id, lease_id, account_id, api_key_id, model, amount_micro)
        select i.request_id, i.lease_id, i.account_id, i.api_key_id, i.model, i.lease_micro
          from items i join open_leases o on o.id = i.lease_id and o.account_id = i.account_id
        on conflict on constraint lease_charges_pkey do nothing
        returning lease_charges.request_id
    )
    select coalesce(array_agg(r.request_id), '{}') into v_done from recorded r;
    return query
      select x.request_id, 0, x.lease_micro
        from jsonb_to_recordset(p_items) as x(request_id text, lease_micro bigint)
       where x.request_id = any(v_done);
    if cardinality(v_done) = jsonb_array_length(p_items) then
      return;
    end if;

    -- The rest, one by one: a charge beyond its lease, one recorded before, one on a closed lease.
    for it in
      select x.request_id as rid, x.lease_id as lid, x.account_id as aid, x.api_key_id as kid, x.model as mdl,
             x.lease_micro as lease_part, x.excess_micro as excess, coalesce(x.waived_micro, 0) as waived
        from jsonb_to_recordset(p_items) as x(request_id text, lease_id text, account_id text, api_key_id text, model text,
                                               lease_micro bigint, excess_micro bigint, waived_micro bigint)
       where not (x.request_id = any(v_done))
       order by x.lease_id, x.request_id
    loop
      v_converted := null;
      if exists (select 1 from lease_charges c where c.request_id = it.rid) then
        -- Recorded before: a no-op, unless it is a stream whose lease was closed while it ran
        -- (its instance looked dead) and charged its prompt then: what the answer cost beyond
        -- that is charged now, from the balance, as a late charge is.
        delete from stream_starts s where s.request_id = it.rid and s.converted_micro is not null
          returning s.converted_micro into v_converted;
        if v_converted is null then
          request_id := it.rid; status := 0; charged := 0; return next; continue;
        end if;
        v_from_lease := 0;
        v_excess := greatest(0, it.lease_part + it.excess - v_converted);
        charged := 0;
      else
        v_from_lease := it.lease_part;
        v_excess := it.excess;
        perform 1 from credit_leases where id = it.lid and account_id = it.aid and closed_at is null for key share;
        if not found then
          if not exists (select 1 from credit_leases where id = it.lid and account_id = it.aid) then
            request_id := it.rid; status := 1; charged := 0; return next; continue;
          end if;
          -- Closed (its unused part already back in the balance): the call was answered, so all
          -- of it is charged from the balance, as an excess is.
          v_from_lease := 0;
          v_excess := it.lease_part + it.excess;
        end if;
        insert into lease_charges (request_id, lease_id, account_id, api_key_id, model, amount_micro)
          values (it.rid, it.lid, it.aid, it.kid, it.mdl, v_from_lease);
        charged := v_from_lease;
      end if;
      if v_excess > 0 then
        -- The key's day (its lease's) locked before the balance, in svc_take_lease's order.
        select l.day into v_day from credit_leases l where l.id = it.lid;
        select k.daily_spend_cap_micro into v_cap from api_keys k where k.id = it.kid;
        insert into key_daily_spend (api_key_id, day, spent_micro) values (it.kid, v_day, 0) on conflict do nothing;
        select s.spent_micro into v_spent from key_daily_spend s where s.api_key_id = it.kid and s.day = v_day for update;
        select balance_micro into v_balance from accounts where id = it.aid for update;
        v_debit := least(v_excess, greatest(v_balance, 0));
        v_reason := 'balance';
        -- Nor past the key's daily cap: what the cap leaves out is the operator's, as what the balance cannot cover is.
        if v_cap is not null and v_cap - v_spent < v_debit then
          v_debit := greatest(v_cap - v_spent, 0);
          v_reason := 'daily_cap';
        end if;
        if v_debit > 0 then
          update accounts set balance_micro = balance_micro - v_debit where id = it.aid;
          insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model)
            values (it.aid, -v_debit, 'charge', it.rid, it.kid, it.mdl);
          -- What the key spent beyond its lease counts on its day too (the lease's day).
          update key_daily_spend set spent_micro = spent_micro + v_debit where api_key_id = it.kid and day = v_day;
          charged := charged + v_debit;
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
      request_id := it.rid; status := 0; return next;
    end loop;
  end $$`;

export const CLOSE_SQL = `create or replace function svc_close_lease(p_lease text) returns bigint language plpgsql as $$
  declare
    l credit_leases%rowtype;
    v_back bigint;
    v_part bigint;
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
    end loop;
    update credit_leases set closed_at = now(), spent_micro = amount_micro - v_back where id = p_lease;
    if v_back > 0 then
      update key_daily_spend set spent_micro = greatest(0, spent_micro - v_back) where api_key_id = l.api_key_id and day = l.day;
      update accounts set balance_micro = balance_micro + v_back where id = l.account_id;
    end if;
    insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id) values (l.account_id, v_back, 'lease_return', p_lease, l.api_key_id);
    return v_back;
  end $$`;

export class Migration20261130000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(RECORD_CHARGES_SQL);
    this.addSql(CLOSE_SQL);
  }

  async down(): Promise<void> {
    // Open leases get their spend back on their row, as the functions restored expect it there.
    this.addSql(`update credit_leases l set spent_micro = (select coalesce(sum(c.amount_micro), 0) from lease_charges c where c.lease_id = l.id)
                  where l.closed_at is null`);
    this.addSql(RECORD_CHARGES_CAPPED_SQL);
    this.addSql(CLOSE_LEASE_SQL);
  }
}
