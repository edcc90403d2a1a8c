import { Migration } from '@mikro-orm/migrations';

/**
 * An instance's heartbeat is one row, not one per lease. Until now the heartbeat updated every
 * open lease the instance held, every `LEASE_GRACE_SECONDS / 6` (5 s by default): 3,000 rows a
 * beat in the bench, a new row version each, and an instance serving 50,000 keys would have
 * written 10,000 lease rows a second for its heartbeat alone. Now it writes its row here, and a
 * lease is stale when neither it (its `heartbeat_at` is when it was taken) nor its holder's row
 * has been heard from for the grace (lease-store.ts, `stale`).
 */
export class Migration20261201000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table lease_holders (
      instance_id text primary key,
      heartbeat_at timestamptz not null default now()
    )`);
  }

  async down(): Promise<void> {
    this.addSql(`drop table lease_holders`);
  }
}
