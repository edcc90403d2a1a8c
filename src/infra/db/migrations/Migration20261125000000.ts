import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency keys name the instance running their first request (`holder`), which says it is
 * still alive (`heartbeat_at`) while that request runs. A key whose holder stopped heartbeating
 * for the lease grace (LEASE_GRACE_SECONDS) was held by an instance that died: a retry takes it
 * over then, instead of getting 409 `idempotency_key_in_use` for 15 minutes. Rows claimed before
 * this migration (no holder) keep the 15-minute rule.
 */
export class Migration20261125000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table idempotency_keys add column holder text, add column heartbeat_at timestamptz`);
    this.addSql(`create index idempotency_keys_running_idx on idempotency_keys (holder) where status_code is null`);
  }

  async down(): Promise<void> {
    this.addSql(`drop index idempotency_keys_running_idx`);
    this.addSql(`alter table idempotency_keys drop column holder, drop column heartbeat_at`);
  }
}
