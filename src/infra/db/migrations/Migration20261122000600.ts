import { Migration } from '@mikro-orm/migrations';

/**
 * The last money rules written in TypeScript — a charge in full (videos), a refund once, an
 * operator grant — become SQL functions beside the hold and lease ones, so every rule that moves
 * a balance lives in one place (the database) and ledger.ts only calls them. Same semantics,
 * same lock order (the key's daily-spend row, then the account row).
 */
export class Migration20261122000600 extends Migration {
  async up(): Promise<void> {
    // 0 = charged, 1 = insufficient credits, 2 = daily cap. Nothing is written unless 0.
    this.addSql(`create function svc_charge(p_account text, p_key text, p_cap bigint, p_amount bigint, p_reference text,
        p_reason text, p_model text, p_day date) returns integer language plpgsql as $$
      begin
        if p_amount <= 0 then return 0; end if;
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
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model)
          values (p_account, -p_amount, 'charge', p_reference, p_key, p_reason, p_model);
        return 0;
      end $$`);

    // Reverses the charge under p_reference once (the unique refund index makes a second call a
    // no-op); gives the amount back to the key's day it was spent on. Answers whether it refunded.
    this.addSql(`create function svc_refund_once(p_account text, p_reference text, p_reason text) returns boolean language plpgsql as $$
      declare
        v_amount bigint;
        v_key text;
        v_day date;
        v_model text;
      begin
        select -sum(amount_micro), max(api_key_id), (min(created_at) at time zone 'UTC')::date, max(model)
          into v_amount, v_key, v_day, v_model
          from ledger_entries where kind = 'charge' and reference = p_reference and account_id = p_account;
        if v_amount is null or v_amount <= 0 then return false; end if;
        insert into ledger_entries (account_id, amount_micro, kind, reference, api_key_id, reason, model)
          values (p_account, v_amount, 'refund', p_reference, v_key, p_reason, v_model) on conflict do nothing;
        if not found then return false; end if;
        if v_key is not null then
          update key_daily_spend set spent_micro = greatest(0, spent_micro - v_amount) where api_key_id = v_key and day = v_day;
        end if;
        update accounts set balance_micro = balance_micro + v_amount where id = p_account;
        return true;
      end $$`);

    // An operator grant; a negative amount takes credits away but never below zero. Answers the
    // amount applied.
    this.addSql(`create function svc_grant(p_account text, p_amount bigint, p_reason text) returns bigint language plpgsql as $$
      declare
        v_applied bigint := p_amount;
        v_balance bigint;
      begin
        if v_applied < 0 then
          select balance_micro into v_balance from accounts where id = p_account for update;
          v_applied := -least(-v_applied, coalesce(v_balance, 0));
        end if;
        if v_applied = 0 then return 0; end if;
        update accounts set balance_micro = balance_micro + v_applied where id = p_account;
        insert into ledger_entries (account_id, amount_micro, kind, reason) values (p_account, v_applied, 'grant', p_reason);
        return v_applied;
      end $$`);
  }
}
