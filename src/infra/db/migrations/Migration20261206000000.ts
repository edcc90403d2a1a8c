import { Migration } from '@mikro-orm/migrations';

/**
 * The request log: a row per authenticated /v1 call that named a model, partitioned by the UTC
 * day of `created` (declarative RANGE partitions, `request_log_YYYYMMDD`, created ahead and
 * dropped past REQUEST_LOG_DAYS by svc_request_log_partitions). The default partition takes a
 * row whose day has no partition yet, so a missing partition never fails the charge a row rides
 * with; the upkeep moves such rows into their day's partition when it creates it.
 *
 * One index, the primary key: (account_id, created, id). It carries the partition key, as
 * PostgreSQL requires, and makes a row written once (every writer of one row repeats its
 * account, time and id alike: a charge replayed from the journal brings the same row); read
 * backwards it gives an account's rows newest first. A second index would double what every
 * charge's insert maintains.
 */
export class Migration20261206000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table request_log (
      id text not null,
      created timestamptz not null,
      account_id text not null,
      api_key_id text not null,
      model text not null,
      endpoint text not null,
      status smallint not null,
      credits_micro bigint not null default 0,
      prompt_tokens integer not null default 0,
      completion_tokens integer not null default 0,
      images integer not null default 0,
      seconds integer not null default 0,
      latency_ms integer not null default 0,
      idempotency_key text,
      error_type text,
      error_code text,
      job_id text,
      primary key (account_id, created, id)
    ) partition by range (created)`);
    this.addSql(`create table request_log_default partition of request_log default`);
  }

  async down(): Promise<void> {
    this.addSql(`drop table request_log`);
  }
}
