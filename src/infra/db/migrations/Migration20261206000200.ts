import { Migration } from '@mikro-orm/migrations';

/**
 * Budgets per UTC week and month beside the daily cap (which is the day's budget):
 * - `api_keys.week_budget_micro`, `month_budget_micro` (null: none);
 * - `key_period_spend`: a key's spend per week (from Monday) and per month (from the 1st), kept
 *   as `key_daily_spend` keeps the day's (open leases counted whole), filled from the days spent
 *   so far;
 * - `credit_leases.watched`: a lease taken with the key's spend at 80% of a budget or more, whose
 *   charges are checked for the budget's thresholds; `key_budget_notices`: each threshold a key's
 *   spend crossed, once per period, budget and percent;
 * - the functions whose arguments or results change are dropped, to be created anew from
 *   src/infra/db/functions (database-functions.ts).
 */
export class Migration20261206000200 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table api_keys add column week_budget_micro bigint, add column month_budget_micro bigint`);

    this.addSql(`create table key_period_spend (
      api_key_id text not null,
      period text not null check (period in ('week', 'month')),
      starts date not null,
      spent_micro bigint not null default 0,
      primary key (api_key_id, period, starts))`);
    this.addSql(`insert into key_period_spend (api_key_id, period, starts, spent_micro)
      select api_key_id, 'week', date_trunc('week', day)::date, sum(spent_micro) from key_daily_spend group by 1, 3
      union all
      select api_key_id, 'month', date_trunc('month', day)::date, sum(spent_micro) from key_daily_spend group by 1, 3`);

    this.addSql(`alter table credit_leases add column watched boolean not null default false`);
    this.addSql(`create index credit_leases_key_open_idx on credit_leases (api_key_id) where closed_at is null`);

    this.addSql(`create table key_budget_notices (
      api_key_id text not null,
      period text not null check (period in ('day', 'week', 'month')),
      starts date not null,
      budget_micro bigint not null,
      percent smallint not null,
      spent_micro bigint not null,
      created_at timestamptz not null default now(),
      primary key (api_key_id, period, starts, budget_micro, percent))`);

    this.addSql(`drop function if exists svc_take_lease(text, text, text, bigint, bigint, bigint, date, text)`);
    this.addSql(`drop function if exists svc_charge(text, text, bigint, bigint, text, text, text, date)`);
    this.addSql(`drop function if exists svc_place_hold(text, text, bigint, bigint, text, date, double precision, jsonb, text)`);
    this.addSql(`drop function if exists svc_record_charges(jsonb)`);
    this.addSql(`delete from db_functions where name in ('svc_take_lease', 'svc_charge', 'svc_place_hold', 'svc_record_charges')`);
  }

  async down(): Promise<void> {
    this.addSql(`drop table key_budget_notices`);
    this.addSql(`drop index credit_leases_key_open_idx`);
    this.addSql(`alter table credit_leases drop column watched`);
    this.addSql(`drop table key_period_spend`);
    this.addSql(`alter table api_keys drop column week_budget_micro, drop column month_budget_micro`);
  }
}
