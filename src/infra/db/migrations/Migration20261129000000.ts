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
 *
 * Not on the embedded PGlite (a WebAssembly build, told apart by its version string): there the
 * same setting made the embedded bench five to seven times slower (300 req/s at 32 connections
 * against 1,734 for the build before it, in alternating runs), for a cause not found, and the
 * embedded database is the single-instance default where this table stays small anyway.
 */
export class Migration20261129000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`do $$ begin
      if version() not like '%Emscripten%' then
        alter table credit_leases set (fillfactor = 50);
      end if;
    end $$`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table credit_leases reset (fillfactor)`);
  }
}
