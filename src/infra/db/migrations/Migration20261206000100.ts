import { Migration } from '@mikro-orm/migrations';

/**
 * Keys that expire and rotate: `expires_at` (null: never); `rotated_at`, and the hash of the
 * secret the last rotation replaced with the end of its grace (null when it was given none).
 */
export class Migration20261206000100 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table api_keys
      add column expires_at timestamptz,
      add column rotated_at timestamptz,
      add column previous_secret_hash text,
      add column previous_secret_until timestamptz`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table api_keys
      drop column expires_at,
      drop column rotated_at,
      drop column previous_secret_hash,
      drop column previous_secret_until`);
  }
}
