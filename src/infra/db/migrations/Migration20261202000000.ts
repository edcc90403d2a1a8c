import { Migration } from '@mikro-orm/migrations';

export class Migration20261202000000 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table accounts
      add column removal_pending_micro bigint not null default 0 check (removal_pending_micro >= 0),
      add column removal_reason text,
      add column removal_leases text[] not null default '{}'`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table accounts drop column removal_pending_micro, drop column removal_reason, drop column removal_leases`);
  }
}
