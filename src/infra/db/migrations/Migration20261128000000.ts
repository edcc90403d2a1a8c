import { Migration } from '@mikro-orm/migrations';

/**
 * A call charged beyond its lease (usage above the estimate, or a late charge) is debited as far
 * as the balance goes and, now, as far as its key's daily cap goes: concurrent calls could each
 * be charged past the lease they were admitted on, and together pass the cap (a fault probe took
 * a 5-credit cap to 14.8). What the cap leaves out is recorded as uncollected, as what the
 * balance cannot cover is, with `reason` telling the two apart (`balance`, `daily_cap`).
 *
 * And a charge kept in the journal (the call answered while the database could not be asked)
 * carries `waived_micro`: what the call cost beyond its lease, which its answer did not promise
 * (it could not know the balance or the cap then), recorded as uncollected with the reason
 * `database_unavailable` instead of being debited later.
 */

export class Migration20261128000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table uncollected_charges add column reason text not null default 'balance'`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table uncollected_charges drop column reason`);
  }
}
