import { Migration } from '@mikro-orm/migrations';

/**
 * svc_log_requests reads logged calls (a charge item is one) and may be told which of them to
 * write: its arguments change, so the old function goes first (the functions are created again
 * after the migrations).
 */
export class Migration20261210000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`drop function if exists svc_log_requests(jsonb)`);
  }

  async down(): Promise<void> {
    this.addSql(`drop function if exists svc_log_requests(jsonb, text[])`);
  }
}
