import { Migration } from '@mikro-orm/migrations';

/** A change of svc_record_charges only (functions/svc-record-charges.ts holds its definition); no schema change. */
export class Migration20261203000000 extends Migration {
  async up(): Promise<void> {}

  async down(): Promise<void> {}
}
