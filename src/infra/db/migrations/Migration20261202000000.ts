import { Migration } from '@mikro-orm/migrations';
import { CLOSE_SQL as CLOSE_WITHOUT_SWEEP_SQL } from './Migration20261130000000';

/**
 * An operator's removal of credits takes what its credit leases bring back too, as they come.
 *
 * Until now a removal called the account's leases back, waited for them to close, and then took
 * what the balance held. Under load that took little: each lease's return landed in the balance
 * and the account's next call leased it again before the removal's own transaction ran (a sweep
 * found "take everything" leaving 1,285 of 5,000 credits, spent on for seconds after).
 *
 * Now the removal is one transaction on the account row (`svc_remove_credits`): it takes what
 * the balance holds at once, and when that is not all it was asked for, it notes the rest on the
 * account (`removal_pending_micro`, with its reason) and the leases open at that moment
 * (`removal_leases`). Each of those leases, when it closes (`svc_close_lease`, whoever closes it:
 * its instance called back, idle, shut down, or another instance after the holder died), gives
 * back as before and in the same transaction the removal takes from what it gave back, up to
 * what is still pending, as a `grant` entry with the removal's reason. A lease taken after the
 * removal is not swept (it leased what the balance held after the removal: a later grant's
 * credits); once the last listed lease closes, whatever is still pending lapses.
 *
 * Lock order: a close locks its lease row, then the account row (as it always did, to give
 * back); a removal locks only the account row and reads the open leases without locking them,
 * so the two never wait on each other in a circle.
 */
const REMOVE_SQL = `create function svc_remove_credits(p_account text, p_amount bigint, p_reason text)
    returns table (taken bigint, pending bigint) language plpgsql as $$
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
    return next;
  end $$`;

const CLOSE_SQL = `create or replace function svc_close_lease(p_lease text) returns bigint language plpgsql as $$
  declare
    l credit_leases%rowtype;
    v_back bigint;
    v_part bigint;
    v_swept bigint;
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
    end loop;
    update credit_leases set closed_at = now(), spent_micro = amount_micro - v_back where id = p_lease;
    if v_back > 0 then
      update key_daily_spend set spent_micro = greatest(0, spent_micro - v_back) where api_key_id = l.api_key_id and day = l.day;
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
    return v_back;
  end $$`;

export class Migration20261202000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table accounts
      add column removal_pending_micro bigint not null default 0 check (removal_pending_micro >= 0),
      add column removal_reason text,
      add column removal_leases text[] not null default '{}'`);
    this.addSql(REMOVE_SQL);
    this.addSql(CLOSE_SQL);
  }

  async down(): Promise<void> {
    this.addSql(CLOSE_WITHOUT_SWEEP_SQL);
    this.addSql(`drop function svc_remove_credits(text, bigint, text)`);
    this.addSql(`alter table accounts drop column removal_pending_micro, drop column removal_reason, drop column removal_leases`);
  }
}
