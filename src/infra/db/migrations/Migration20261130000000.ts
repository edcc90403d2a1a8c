import { Migration } from '@mikro-orm/migrations';

export class Migration20261130000000 extends Migration {
  async up(): Promise<void> {}

  async down(): Promise<void> {
    // Open leases get their spend back on their row, as the functions restored expect it there.
    this.addSql(`update credit_leases l set spent_micro = (select coalesce(sum(c.amount_micro), 0) from lease_charges c where c.lease_id = l.id)
                  where l.closed_at is null`);
  }
}
