import { Migration } from '@mikro-orm/migrations';

/**
 * The ledger records the model of each charge, so usage can be split by model (the console's
 * chart, GET /account/usage). A hold carries its model; settling copies it onto the release and
 * the charge, and a refund copies it from the charge. Entries written before this have none.
 */
export class Migration20261122000200 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table ledger_entries add column model text`);
    // Usage reads one account's charges and refunds over a date range.
    this.addSql(`create index ledger_entries_account_time_idx on ledger_entries (account_id, created_at)`);
  }
}
