import { Migration } from '@mikro-orm/migrations';

/**
 * Every recorded charge updates its lease row (spent, heartbeat). The index on `heartbeat_at`
 * made each of those updates a new row version with an entry in every index of the table (a
 * HOT update is possible only when no indexed column changes): on the bench's PostgreSQL, 99%
 * of lease updates went that way and the table held 70,000 dead versions of 300 live rows,
 * which every charge's lookup then walked. Without it 99.9% are HOT, and the page pruning that
 * comes with them keeps the dead versions to a few dozen. The stale-lease sweep (open leases
 * whose heartbeat is old) reads the few open leases through the open-lease index on
 * `account_id` instead. (A fillfactor of 50 was tried as well: no better on PostgreSQL, where
 * pruning already makes room, and five times slower per call on the embedded PGlite.)
 */
export class Migration20261122000700 extends Migration {
  async up(): Promise<void> {
    this.addSql(`drop index credit_leases_open_idx`);
  }
}
