import { Migration } from '@mikro-orm/migrations';

/**
 * Every recorded charge updates its lease row (spent, heartbeat). The index on `heartbeat_at`
 * made each of those updates a new row version with an entry in every index of the table (a
 * HOT update is possible only when no indexed column changes): on the bench's PostgreSQL, 99%
 * of lease updates went that way and the table held 70,000 dead versions of 300 live rows,
 * which every charge's lookup then walked. The stale-lease sweep (open leases whose heartbeat
 * is old) reads the few open leases through the open-lease index on `account_id` instead, and
 * the table keeps half of each page free so the updated version fits beside the old one.
 */
export class Migration20261122000700 extends Migration {
  async up(): Promise<void> {
    this.addSql(`drop index credit_leases_open_idx`);
    this.addSql(`alter table credit_leases set (fillfactor = 50)`);
  }
}
