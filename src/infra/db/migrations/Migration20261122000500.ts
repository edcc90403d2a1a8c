import { Migration } from '@mikro-orm/migrations';

/**
 * Credit leases (RFC 4006-style quota grants): an instance takes a lease of credits from an
 * account for one key (one conditional debit, a `lease` ledger entry, counted against the key's
 * daily cap), serves calls from it in memory, and records each call's charge as a
 * `lease_charges` row — many group-committed in one transaction, before their responses go out.
 * Closing a lease returns what its recorded charges did not use, once (`lease_return`).
 *
 * The account ledger shows the lease and its return; the calls it paid for are the lease's
 * charges (the escrow's own ledger): for a closed lease, amount − returned = Σ its charges.
 * A call whose usage outgrew its lease is charged the excess directly (a `charge` entry, as far
 * as the balance goes) and the rest is recorded as uncollected, never as a negative balance.
 *
 * Money rules live here, in SQL, as the hold functions before them do: the TypeScript side only
 * decides when to call them.
 */
export class Migration20261122000500 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table ledger_entries drop constraint ledger_entries_kind_check`);
    this.addSql(`alter table ledger_entries add constraint ledger_entries_kind_check
      check (kind in ('grant', 'charge', 'refund', 'hold', 'release', 'lease', 'lease_return'))`);
    this.addSql(`create unique index ledger_entries_lease_return_once on ledger_entries (reference) where kind = 'lease_return'`);

    this.addSql(`create table credit_leases (
      id text primary key,
      account_id text not null references accounts(id),
      api_key_id text not null,
      instance_id text not null,
      day date not null,
      amount_micro bigint not null check (amount_micro > 0),
      spent_micro bigint not null default 0 check (spent_micro >= 0 and spent_micro <= amount_micro),
      heartbeat_at timestamptz not null default now(),
      created_at timestamptz not null default now(),
      closed_at timestamptz)`);
    this.addSql(`create index credit_leases_open_idx on credit_leases (heartbeat_at) where closed_at is null`);
    this.addSql(`create index credit_leases_account_open_idx on credit_leases (account_id) where closed_at is null`);

    // Numbered from the ledger's own sequence, so the account's statement can list ledger entries
    // and lease charges together in one order (GET /account/ledger-entries).
    this.addSql(`create table lease_charges (
      id bigint not null default nextval('ledger_entries_id_seq') unique,
      request_id text primary key,
      lease_id text not null references credit_leases(id),
      account_id text not null,
      api_key_id text not null,
      model text,
      amount_micro bigint not null check (amount_micro >= 0),
      created_at timestamptz not null default now())`);
    this.addSql(`create index lease_charges_lease_idx on lease_charges (lease_id)`);
    this.addSql(`create index lease_charges_account_time_idx on lease_charges (account_id, created_at)`);

    this.addSql(`create table uncollected_charges (
      request_id text primary key,
      account_id text not null,
      api_key_id text not null,
      model text,
      amount_micro bigint not null check (amount_micro > 0),
      created_at timestamptz not null default now())`);

    // Takes a lease of at least p_min (the call at hand) and up to p_want, but never more than a
    // quarter of the balance or half of what the key's cap has left: other keys and instances
    // keep room, and an account can be spent down to its last call.
    // Answers the amount leased, -1 when the balance cannot cover p_min, -2 for the daily cap.
    // Lock order as everywhere: the key's daily-spend row, then the account row.
    this.addSql(`create function svc_take_lease(p_lease text, p_account text, p_key text, p_cap bigint, p_min bigint, p_want bigint,
        p_day date, p_instance text) returns bigint language plpgsql as $$
      declare
        v_spent bigint;
        v_balance bigint;
        v_amount bigint;
      begin
        insert into key_daily_spend (api_key_id, day, spent_micro) values (p_key, p_day, 0) on conflict do nothing;
        select spent_micro into v_spent from key_daily_spend where api_key_id = p_key and day = p_day for update;
        select balance_micro into v_balance from accounts where id = p_account for update;
        if v_balance is null then return -1; end if;
        v_amount := least(p_want, v_balance / 4);
        if p_cap is not null then v_amount := least(v_amount, (p_cap - v_spent) / 2); end if;
        v_amount := greatest(v_amount, p_min);
        if p_cap is not null and v_spent + v_amount > p_cap then return -2; end if;
        if v_balance < v_amount then return -1; end if;
        update key_daily_spend set spent_micro = spent_micro + v_amount where api_key_id = p_key and day = p_day;
        update accounts set balance_micro = balance_micro - v_amount where id = p_account;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id) values (p_account, -v_amount, 'lease', p_lease, p_key);
        insert into credit_leases (id, account_id, api_key_id, instance_id, day, amount_micro) values (p_lease, p_account, p_key, p_instance, p_day, v_amount);
        return v_amount;
      end $$`);

    // Closes a lease once: what its recorded charges did not use goes back to the balance and
    // off the key's day. Answers the amount returned, or -1 when it was closed already.
    this.addSql(`create function svc_close_lease(p_lease text) returns bigint language plpgsql as $$
      declare
        l credit_leases%rowtype;
        v_back bigint;
      begin
        select * into l from credit_leases where id = p_lease for update;
        if not found or l.closed_at is not null then return -1; end if;
        v_back := l.amount_micro - l.spent_micro;
        update credit_leases set closed_at = now() where id = p_lease;
        if v_back > 0 then
          update key_daily_spend set spent_micro = greatest(0, spent_micro - v_back) where api_key_id = l.api_key_id and day = l.day;
          update accounts set balance_micro = balance_micro + v_back where id = l.account_id;
        end if;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id) values (l.account_id, v_back, 'lease_return', p_lease, l.api_key_id);
        return v_back;
      end $$`);

    // Records a batch of calls' charges in one transaction. Each item: the request id, its
    // lease, account, key and model, the part paid from the lease, and any excess beyond it,
    // which is debited from the balance as far as it goes (the rest recorded as uncollected).
    // An item whose lease is closed or too small is refused (status 1) and nothing of it is
    // written; a request id recorded before is a no-op (status 0, idempotent).
    // Answers one row per item: (request_id, status, charged).
    this.addSql(`create function svc_record_charges(p_items jsonb)
        returns table (request_id text, status int, charged bigint) language plpgsql as $$
      declare
        it record;
        v_debit bigint;
        v_balance bigint;
      begin
        for it in
          select x.request_id as rid, x.lease_id as lid, x.account_id as aid, x.api_key_id as kid, x.model as mdl,
                 x.lease_micro as lease_part, x.excess_micro as excess
            from jsonb_to_recordset(p_items) as x(request_id text, lease_id text, account_id text, api_key_id text, model text,
                                                   lease_micro bigint, excess_micro bigint)
           order by x.lease_id, x.request_id
        loop
          if exists (select 1 from lease_charges c where c.request_id = it.rid) then
            request_id := it.rid; status := 0; charged := 0; return next; continue;
          end if;
          update credit_leases set spent_micro = spent_micro + it.lease_part, heartbeat_at = now()
           where id = it.lid and closed_at is null and spent_micro + it.lease_part <= amount_micro;
          if not found then
            request_id := it.rid; status := 1; charged := 0; return next; continue;
          end if;
          insert into lease_charges (request_id, lease_id, account_id, api_key_id, model, amount_micro)
            values (it.rid, it.lid, it.aid, it.kid, it.mdl, it.lease_part);
          charged := it.lease_part;
          if it.excess > 0 then
            select balance_micro into v_balance from accounts where id = it.aid for update;
            v_debit := least(it.excess, greatest(v_balance, 0));
            if v_debit > 0 then
              update accounts set balance_micro = balance_micro - v_debit where id = it.aid;
              insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model)
                values (it.aid, -v_debit, 'charge', it.rid, it.kid, it.mdl);
              charged := charged + v_debit;
            end if;
            if it.excess > v_debit then
              insert into uncollected_charges (request_id, account_id, api_key_id, model, amount_micro)
                values (it.rid, it.aid, it.kid, it.mdl, it.excess - v_debit);
            end if;
          end if;
          request_id := it.rid; status := 0; return next;
        end loop;
      end $$`);
  }
}
