import { Migration } from '@mikro-orm/migrations';

/**
 * The ledger records the model of each charge, so usage can be split by model (the console's
 * chart, GET /account/usage). A hold carries its model; settling copies it onto the release and
 * the charge, and a refund copies it from the charge. Entries written before this have none.
 */
export class Migration20261122000200 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table ledger_entries add column model text`);
    // Usage reads one account's charges and refunds over a date range.
    this.addSql(`create index ledger_entries_account_time_idx on ledger_entries (account_id, created_at)`);

    this.addSql(`drop function svc_place_hold(text, text, bigint, bigint, text, date, double precision, jsonb)`);
    this.addSql(`create function svc_place_hold(p_account text, p_key text, p_cap bigint, p_amount bigint, p_hold text,
        p_day date, p_expiry_seconds double precision, p_payload jsonb, p_model text default null) returns integer language plpgsql as $$
      begin
        -- 0 = held, 1 = insufficient credits, 2 = daily cap
        if p_cap is not null and p_amount > p_cap then return 2; end if;
        insert into key_daily_spend as s (api_key_id, day, spent_micro) values (p_key, p_day, p_amount)
          on conflict (api_key_id, day) do update set spent_micro = s.spent_micro + excluded.spent_micro
          where p_cap is null or s.spent_micro + excluded.spent_micro <= p_cap;
        if not found then return 2; end if;
        update accounts set balance_micro = balance_micro - p_amount where id = p_account and balance_micro >= p_amount;
        if not found then
          update key_daily_spend set spent_micro = spent_micro - p_amount where api_key_id = p_key and day = p_day;
          return 1;
        end if;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model) values (p_account, -p_amount, 'hold', p_hold, p_key, p_model);
        insert into work_items (kind, ref, payload, due_at) values ('hold_expiry', p_hold, p_payload, now() + make_interval(secs => p_expiry_seconds));
        return 0;
      end $$`);

    this.addSql(`create or replace function svc_settle_hold(p_account text, p_key text, p_hold text, p_actual bigint) returns boolean language plpgsql as $$
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
          update key_daily_spend set spent_micro = greatest(0, spent_micro - (v_held - v_charge)) where api_key_id = p_key and day = v_day;
          update accounts set balance_micro = balance_micro + (v_held - v_charge) where id = p_account;
        end if;
        if v_charge > 0 then
          insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, model) values (p_account, -v_charge, 'charge', p_hold, p_key, v_model);
        end if;
        delete from work_items where kind = 'hold_expiry' and ref = p_hold;
        return true;
      end $$`);
  }
}
