import { Migration } from '@mikro-orm/migrations';

/**
 * Stored Responses (POST /v1/responses with `store` not false): the conversation so far, for
 * `previous_response_id`, and each output item by id, for `item_reference`. Owned by an account;
 * kept 30 days (reads ignore older rows; saves delete them).
 */
export class Migration20261122000400 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table stored_responses (
      id text primary key,
      account_id text not null references accounts(id),
      items jsonb not null,
      response jsonb not null,
      created_at timestamptz not null default now())`);
    this.addSql(`create index stored_responses_account_time_idx on stored_responses (account_id, created_at)`);
    this.addSql(`create table stored_response_items (
      id text primary key,
      account_id text not null references accounts(id),
      response_id text not null references stored_responses(id) on delete cascade,
      item jsonb not null)`);
    this.addSql(`create index stored_response_items_response_idx on stored_response_items (response_id)`);
  }
}
