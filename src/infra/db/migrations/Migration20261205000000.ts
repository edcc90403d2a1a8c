import { Migration } from '@mikro-orm/migrations';

/**
 * An Idempotency-Key claim whose run ended without an answer to keep (a 402, a 429, a 5xx) is
 * released, not deleted: the row keeps its request fingerprint and its `call_id`, and the next
 * request with the same key and body takes it at once as the same call. A run that took over a
 * dead instance's claim may have left committed work under that call id (a job, a charge);
 * deleting the row gave the retry after a refusal a new call id, and with it a second job and a
 * second charge.
 */
export class Migration20261205000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table idempotency_keys add column released boolean not null default false`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table idempotency_keys drop column released`);
  }
}
