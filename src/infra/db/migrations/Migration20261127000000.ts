import { Migration } from '@mikro-orm/migrations';

/**
 * Each Idempotency-Key claim names its call (`call_id`): the call's id (`chatcmpl-…`, `img_…`,
 * `vid_…`) is made from it. A retry that takes over the claim of an instance that died keeps
 * the same `call_id`, so when the dead instance had committed the call's charge before it could
 * store the response, the retry's run is the same call to the ledger (charges are unique per
 * call), and is not charged a second time. A key taken again after it expired gets a new one.
 */
export class Migration20261127000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table idempotency_keys add column call_id text`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table idempotency_keys drop column call_id`);
  }
}
