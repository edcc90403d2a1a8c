import { Migration } from '@mikro-orm/migrations';

/**
 * Account alerts: an account's own webhook and its low-balance threshold, with the state that
 * makes `balance.low` once per crossing (`account_alerts`); the account events' outbox
 * (`account_events`), one row per event, its id derived from what makes it once; and the
 * delivery log's rows of account events, which have no key and no job.
 */
export class Migration20261206000300 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table account_alerts (
      account_id text primary key references accounts(id),
      webhook_url text,
      webhook_secret text,
      low_balance_micro bigint check (low_balance_micro > 0),
      low_balance_below boolean not null default false,
      low_balance_crossings integer not null default 0)`);
    // No foreign key on account_id: the row is written under the account's alert-row lock, and a
    // key-share lock on the account row taken there could wait on a transaction that waits on it.
    this.addSql(`create table account_events (
      id text primary key,
      account_id text not null,
      type text not null,
      occurrence text not null,
      data jsonb not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index account_events_account_idx on account_events (account_id, created_at desc)`);
    this.addSql(`alter table webhook_deliveries alter column api_key_id drop not null, alter column job_id drop not null`);
    this.addSql(`create index webhook_deliveries_account_idx on webhook_deliveries (account_id, id desc) where api_key_id is null`);
  }

  async down(): Promise<void> {
    this.addSql(`drop index webhook_deliveries_account_idx`);
    this.addSql(`delete from webhook_deliveries where api_key_id is null or job_id is null`);
    this.addSql(`alter table webhook_deliveries alter column api_key_id set not null, alter column job_id set not null`);
    this.addSql(`drop table account_events`);
    this.addSql(`drop table account_alerts`);
  }
}
