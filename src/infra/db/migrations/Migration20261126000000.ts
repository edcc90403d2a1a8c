import { Migration } from '@mikro-orm/migrations';

/**
 * Streams cut by the death of their instance are charged their prompt and what they had relayed. Until now a stream whose
 * instance was SIGKILLed (or lost its machine) mid-answer was never charged: its reservation
 * lived only in that instance's memory, and the lease it came from went back whole, less its
 * recorded charges, when another instance closed it after the grace.
 *
 * `stream_starts`: a stream that has begun answering (its 200 is out) and has run for a moment
 * (stream-starts.ts) is written here with its lease and what it owes (its prompt and what it has
 * relayed, brought up to date every moment it runs on); its row goes once its charge is recorded.
 * `svc_close_lease` now first charges each stream of the lease that never settled (no
 * `lease_charges` row) what it owed, from the lease, as a client that left is charged, and
 * marks the row converted: a lease is only closed with calls
 * in flight when its instance stopped heartbeating, so those streams died with it (or it lost
 * the database for the grace). In the second case the stream ends later and its real charge
 * arrives, finding the call recorded: `svc_record_charges` then charges what it cost beyond what
 * was charged at the close, from the balance, as a late charge (migration 20261124000000).
 */
/** svc_record_charges as this migration writes it (migration 20261128000000 restores it on the way down). */
export const RECORD_CHARGES_SQL = `create or replace function svc_record_charges(p_items jsonb)
        returns table (request_id text, status int, charged bigint) language plpgsql as $$
      declare
        it record;
        v_debit bigint;
        v_balance bigint;
        v_done text[] := '{}';
        v_from_lease bigint;
        v_excess bigint;
        v_converted bigint;
      begin
        -- One charge alone: the row walk is the cheaper way (no set to build).
        if jsonb_array_length(p_items) > 1 then
          with items as (
              select y.request_id, y.lease_id, y.account_id, y.api_key_id, y.model, y.lease_micro
                from (select x.*, count(*) over (partition by x.request_id) as copies
                        from jsonb_to_recordset(p_items) as x(request_id text, lease_id text, account_id text, api_key_id text, model text,
                                                              lease_micro bigint, excess_micro bigint)) y
               where y.excess_micro = 0 and y.copies = 1
                 and not exists (select 1 from lease_charges c where c.request_id = y.request_id)
          ), per_lease as (
              select i.lease_id, i.account_id, sum(i.lease_micro) as total from items i group by i.lease_id, i.account_id
          ), grown as (
              update credit_leases l set spent_micro = l.spent_micro + p.total, heartbeat_at = now()
                from (select q.lease_id, q.account_id, q.total from per_lease q order by q.lease_id) p
               where l.id = p.lease_id and l.account_id = p.account_id and l.closed_at is null and l.spent_micro + p.total <= l.amount_micro
              returning l.id
          ), recorded as (
              insert into lease_charges (request_id, lease_id, account_id, api_key_id, model, amount_micro)
              select i.request_id, i.lease_id, i.account_id, i.api_key_id, i.model, i.lease_micro
                from items i where i.lease_id in (select g.id from grown g)
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
        end if;

        for it in
          select x.request_id as rid, x.lease_id as lid, x.account_id as aid, x.api_key_id as kid, x.model as mdl,
                 x.lease_micro as lease_part, x.excess_micro as excess
            from jsonb_to_recordset(p_items) as x(request_id text, lease_id text, account_id text, api_key_id text, model text,
                                                   lease_micro bigint, excess_micro bigint)
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
            update credit_leases set spent_micro = spent_micro + it.lease_part, heartbeat_at = now()
             where id = it.lid and account_id = it.aid and closed_at is null and spent_micro + it.lease_part <= amount_micro;
            if not found then
              if not exists (select 1 from credit_leases where id = it.lid and account_id = it.aid) then
                request_id := it.rid; status := 1; charged := 0; return next; continue;
              end if;
              -- Closed (its unused part already back in the balance) or too small: the call was
              -- answered, so all of it is charged from the balance, as an excess is.
              v_from_lease := 0;
              v_excess := it.lease_part + it.excess;
            end if;
            insert into lease_charges (request_id, lease_id, account_id, api_key_id, model, amount_micro)
              values (it.rid, it.lid, it.aid, it.kid, it.mdl, v_from_lease);
            charged := v_from_lease;
          end if;
          if v_excess > 0 then
            select balance_micro into v_balance from accounts where id = it.aid for update;
            v_debit := least(v_excess, greatest(v_balance, 0));
            if v_debit > 0 then
              update accounts set balance_micro = balance_micro - v_debit where id = it.aid;
              insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model)
                values (it.aid, -v_debit, 'charge', it.rid, it.kid, it.mdl);
              -- What the key spent beyond its lease counts on its day too (the lease's day).
              update key_daily_spend set spent_micro = spent_micro + v_debit
               where api_key_id = it.kid and day = (select l.day from credit_leases l where l.id = it.lid);
              charged := charged + v_debit;
            end if;
            if v_excess > v_debit then
              insert into uncollected_charges (request_id, account_id, api_key_id, model, amount_micro)
                values (it.rid, it.aid, it.kid, it.mdl, v_excess - v_debit);
            end if;
          end if;
          request_id := it.rid; status := 0; return next;
        end loop;
      end $$`;

/** svc_close_lease as this migration writes it (migration 20261130000000 restores it on the way down). */
export const CLOSE_LEASE_SQL = `create or replace function svc_close_lease(p_lease text) returns bigint language plpgsql as $$
      declare
        l credit_leases%rowtype;
        v_back bigint;
        v_part bigint;
        s record;
      begin
        select * into l from credit_leases where id = p_lease for update;
        if not found or l.closed_at is not null then return -1; end if;
        v_back := l.amount_micro - l.spent_micro;
        -- Streams of this lease that never settled: each is charged what it owed when last written, within the lease.
        for s in select * from stream_starts where lease_id = p_lease and converted_micro is null order by request_id for update loop
          if exists (select 1 from lease_charges c where c.request_id = s.request_id) then
            delete from stream_starts where request_id = s.request_id;
            continue;
          end if;
          v_part := least(s.owed_micro, greatest(v_back, 0));
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

export class Migration20261126000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table stream_starts (
      request_id text primary key,
      lease_id text not null references credit_leases(id),
      account_id text not null,
      api_key_id text not null,
      model text,
      owed_micro bigint not null check (owed_micro >= 0),
      started_at timestamptz not null default now(),
      converted_micro bigint)`);
    this.addSql(`create index stream_starts_lease_idx on stream_starts (lease_id)`);

    this.addSql(CLOSE_LEASE_SQL);

    this.addSql(RECORD_CHARGES_SQL);
  }
}
