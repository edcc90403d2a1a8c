import { Migration } from '@mikro-orm/migrations';

/** The initial schema: accounts, the credit ledger, API keys, video jobs, durable work, webhooks, media. */
export class Migration20261122000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table server_secrets (
      name text primary key,
      value text not null,
      created_at timestamptz not null default now())`);

    this.addSql(`create table accounts (
      id text primary key,
      issuer text not null,
      subject text not null,
      balance_micro bigint not null default 0 check (balance_micro >= 0),
      member boolean not null default false,
      created_at timestamptz not null default now(),
      unique (issuer, subject))`);

    this.addSql(`create table ledger_entries (
      id bigserial primary key,
      account_id text not null references accounts(id),
      amount_micro bigint not null,
      kind text not null check (kind in ('grant', 'charge', 'refund', 'hold', 'release')),
      reference text,
      api_key_id text,
      reason text,
      created_at timestamptz not null default now())`);
    this.addSql(`create index ledger_entries_account_idx on ledger_entries (account_id, id)`);
    // A charge and a refund are unique per reference (a job id, a hold id): a retried or
    // concurrent refund can never be written twice, whatever crashes in between.
    this.addSql(`create unique index ledger_entries_once_idx on ledger_entries (kind, reference)
      where kind in ('refund', 'release', 'hold') and reference is not null`);

    this.addSql(`create table api_keys (
      id text primary key,
      account_id text not null references accounts(id),
      name text not null,
      mode text not null check (mode in ('live', 'test')),
      secret_hash text not null unique,
      allowed_models jsonb,
      blocked_models jsonb,
      daily_spend_cap_micro bigint,
      webhook_url text,
      webhook_secret text,
      created_at timestamptz not null default now(),
      last_used_at timestamptz,
      revoked_at timestamptz)`);
    this.addSql(`create index api_keys_account_idx on api_keys (account_id) where revoked_at is null`);

    this.addSql(`create table key_daily_spend (
      api_key_id text not null,
      day date not null,
      spent_micro bigint not null default 0,
      primary key (api_key_id, day))`);

    this.addSql(`create table video_jobs (
      id text primary key,
      account_id text not null references accounts(id),
      api_key_id text not null references api_keys(id),
      test_mode boolean not null,
      model text not null,
      kind text not null,
      provider text not null,
      spec jsonb not null,
      queue_id text not null,
      status text not null check (status in ('PROCESSING', 'COMPLETED', 'FAILED')),
      credits_charged_micro bigint not null,
      credits_used_micro bigint,
      media_id text,
      reason text,
      submitted_at timestamptz,
      deadline_at timestamptz not null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index video_jobs_account_idx on video_jobs (account_id, created_at desc, id desc)`);

    // The transactional outbox: every piece of work that must survive a crash is a row with a
    // due time, written in the transaction that caused it and claimed with SKIP LOCKED.
    this.addSql(`create table work_items (
      id bigserial primary key,
      kind text not null,
      ref text not null,
      payload jsonb not null default '{}'::jsonb,
      due_at timestamptz not null,
      attempts integer not null default 0,
      locked_until timestamptz,
      created_at timestamptz not null default now())`);
    this.addSql(`create index work_items_due_idx on work_items (due_at)`);
    this.addSql(`create unique index work_items_kind_ref_idx on work_items (kind, ref)`);

    this.addSql(`create table webhook_deliveries (
      id bigserial primary key,
      delivery_id text not null,
      event_id text not null,
      api_key_id text not null,
      account_id text not null,
      job_id text not null,
      attempt integer not null,
      status_code integer,
      error text,
      duration_ms integer not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index webhook_deliveries_key_idx on webhook_deliveries (api_key_id, id desc)`);
    this.addSql(`create index webhook_deliveries_job_idx on webhook_deliveries (job_id, id desc)`);

    this.addSql(`create table media_objects (
      id text primary key,
      account_id text not null,
      content_type text not null,
      size_bytes integer not null,
      storage_key text not null,
      created_at timestamptz not null default now())`);
  }
}
