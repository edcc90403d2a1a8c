import { Migration } from '@mikro-orm/migrations';
import { RECORD_CHARGES_SQL } from './Migration20261126000000';

/**
 * A call charged beyond its lease (usage above the estimate, or a late charge) is debited as far
 * as the balance goes and, now, as far as its key's daily cap goes: concurrent calls could each
 * be charged past the lease they were admitted on, and together pass the cap (a fault probe took
 * a 5-credit cap to 14.8). What the cap leaves out is recorded as uncollected, as what the
 * balance cannot cover is, with `reason` telling the two apart (`balance`, `daily_cap`).
 *
 * And a charge kept in the journal (the call answered while the database could not be asked)
 * carries `waived_micro`: what the call cost beyond its lease, which its answer did not promise
 * (it could not know the balance or the cap then), recorded as uncollected with the reason
 * `database_unavailable` instead of being debited later.
 */
/** svc_record_charges as this migration writes it (migration 20261130000000 restores it on the way down). */
export const RECORD_CHARGES_CAPPED_SQL = `create or replace function svc_record_charges(p_items jsonb)
        returns table (request_id text, status int, charged bigint) language plpgsql as $$
      declare
        it record;
        v_debit bigint;
        v_balance bigint;
        v_done text[] := '{}';
        v_from_lease bigint;
        v_excess bigint;
        v_converted bigint;
        v_day date;
        v_cap bigint;
        v_spent bigint;
        v_reason text;
      begin
        -- One charge alone: the row walk is the cheaper way (no set to build).
        if jsonb_array_length(p_items) > 1 then
          with items as (
              select y.request_id, y.lease_id, y.account_id, y.api_key_id, y.model, y.lease_micro
                from (select x.*, count(*) over (partition by x.request_id) as copies
                        from jsonb_to_recordset(p_items) as x(request_id text, lease_id text, account_id text, api_key_id text, model text,
                                                              lease_micro bigint, excess_micro bigint, waived_micro bigint)) y
               where y.excess_micro = 0 and coalesce(y.waived_micro, 0) = 0 and y.copies = 1
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

export class Migration20261128000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table uncollected_charges add column reason text not null default 'balance'`);
    this.addSql(RECORD_CHARGES_CAPPED_SQL);
  }

  async down(): Promise<void> {
    this.addSql(RECORD_CHARGES_SQL);
    this.addSql(`alter table uncollected_charges drop column reason`);
  }
}
