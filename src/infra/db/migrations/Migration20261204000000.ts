import { Migration } from '@mikro-orm/migrations';

/**
 * One clock for the daily-spend day: the database's. A lease take, a video charge and a video's
 * refund all count on the database's UTC day, whatever the calling instance's clock says, so a
 * refund lands on its charge's day even around midnight or with an instance's clock a little off,
 * and an instance whose clock runs a day ahead cannot give a key a second day's cap. The functions
 * keep their signatures (`p_day` is not read) so instances of the previous version go on working
 * beside these during a rollout.
 */
export class Migration20261204000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create or replace function svc_take_lease(p_lease text, p_account text, p_key text, p_cap bigint, p_min bigint, p_want bigint,
        p_day date, p_instance text) returns bigint language plpgsql as $$
      declare
        v_day date := (now() at time zone 'UTC')::date;
        v_spent bigint;
        v_balance bigint;
        v_amount bigint;
      begin
        insert into key_daily_spend (api_key_id, day, spent_micro) values (p_key, v_day, 0) on conflict do nothing;
        select spent_micro into v_spent from key_daily_spend where api_key_id = p_key and day = v_day for update;
        select balance_micro into v_balance from accounts where id = p_account for update;
        if v_balance is null then return -1; end if;
        v_amount := least(p_want, v_balance / 4);
        if p_cap is not null then v_amount := least(v_amount, (p_cap - v_spent) / 2); end if;
        v_amount := greatest(v_amount, p_min);
        if p_cap is not null and v_spent + v_amount > p_cap then return -2; end if;
        if v_balance < v_amount then return -1; end if;
        update key_daily_spend set spent_micro = spent_micro + v_amount where api_key_id = p_key and day = v_day;
        update accounts set balance_micro = balance_micro - v_amount where id = p_account;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id) values (p_account, -v_amount, 'lease', p_lease, p_key);
        insert into credit_leases (id, account_id, api_key_id, instance_id, day, amount_micro) values (p_lease, p_account, p_key, p_instance, v_day, v_amount);
        return v_amount;
      end $$`);

    // The charge's day is the day of its ledger entry's created_at (both now(), the transaction's
    // start), which is the day svc_refund_once gives the amount back to.
    this.addSql(`create or replace function svc_charge(p_account text, p_key text, p_cap bigint, p_amount bigint, p_reference text,
        p_reason text, p_model text, p_day date) returns integer language plpgsql as $$
      declare
        v_day date := (now() at time zone 'UTC')::date;
      begin
        if p_amount <= 0 then return 0; end if;
        if p_cap is not null and p_amount > p_cap then return 2; end if;
        insert into key_daily_spend as s (api_key_id, day, spent_micro) values (p_key, v_day, p_amount)
          on conflict (api_key_id, day) do update set spent_micro = s.spent_micro + excluded.spent_micro
          where p_cap is null or s.spent_micro + excluded.spent_micro <= p_cap;
        if not found then return 2; end if;
        update accounts set balance_micro = balance_micro - p_amount where id = p_account and balance_micro >= p_amount;
        if not found then
          update key_daily_spend set spent_micro = spent_micro - p_amount where api_key_id = p_key and day = v_day;
          return 1;
        end if;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model)
          values (p_account, -p_amount, 'charge', p_reference, p_key, p_reason, p_model);
        return 0;
      end $$`);
  }
}
