import { Migration } from '@mikro-orm/migrations';

/**
 * The audit log: one row per operator action (a grant or take-back, a member flag, a catalog
 * reload), written in the action's own transaction. `actor` is `token` (ADMIN_TOKEN) or
 * `sub:<subject>`; `before` and `after` hold the target's facts around the action. Rows are only
 * ever inserted; the id orders them and is the list's cursor.
 *
 * The operator's daily totals read every account's charges by time: indexes by time alone for
 * the ledger's charges, refunds and grants and for the charges paid from credit leases.
 */
export class Migration20261209000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table audit_log (
      id bigint generated always as identity primary key,
      actor text not null check (actor = 'token' or actor like 'sub:%'),
      action text not null,
      target text not null,
      before jsonb,
      after jsonb,
      created_at timestamptz not null default now())`);
    this.addSql(`create index ledger_entries_time_idx on ledger_entries (created_at) where kind in ('charge', 'refund', 'grant')`);
    this.addSql(`create index lease_charges_time_idx on lease_charges (created_at)`);
  }

  async down(): Promise<void> {
    this.addSql(`drop index lease_charges_time_idx`);
    this.addSql(`drop index ledger_entries_time_idx`);
    this.addSql(`drop table audit_log`);
  }
}
