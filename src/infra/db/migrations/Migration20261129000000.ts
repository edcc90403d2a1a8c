import { Migration } from '@mikro-orm/migrations';

/**
 * Every billed call updates its lease row (`spent_micro`, `heartbeat_at`): the hottest update in
 * the schema. Neither column is indexed, so PostgreSQL can make each update a HOT update (the new
 * row version on the same page, no index entries) — but only when the page has room. Leases taken
 * together fill their pages (fillfactor 100), and then most updates were not HOT: in the bench's
 * one-connection phase 28% were, the table grew to 5.7 MB of dead versions for 6,000 rows, and
 * the charge statement took about twice as long as on a fresh table. Half of each page is now
 * kept free for the row's next versions, which the page's own pruning then reclaims.
 *
 * Applies to pages written from now on; `VACUUM FULL credit_leases` rewrites the existing ones.
 */
export class Migration20261129000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table credit_leases set (fillfactor = 50)`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table credit_leases reset (fillfactor)`);
  }
}
