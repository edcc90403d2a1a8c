import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency keys: one row per (API key, Idempotency-Key), kept 24 hours. `fingerprint` is a
 * hash of the request the key was first used with; `status_code` is null while the first request
 * runs, then holds the response that a retry replays (headers, and the body as sent in base64).
 */
export class Migration20261122000300 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table idempotency_keys (
      api_key_id text not null,
      idempotency_key text not null,
      fingerprint text not null,
      status_code integer,
      response_headers jsonb,
      response_body text,
      started_at timestamptz not null default now(),
      expires_at timestamptz not null,
      primary key (api_key_id, idempotency_key))`);
    this.addSql(`create index idempotency_keys_expiry_idx on idempotency_keys (expires_at)`);
  }

  async down(): Promise<void> {
    this.addSql(`drop table idempotency_keys`);
  }
}
