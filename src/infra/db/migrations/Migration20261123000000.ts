import { Migration } from '@mikro-orm/migrations';

/** Database functions only (svc_record_charges: their definitions are in ../functions); no schema change. */
export class Migration20261123000000 extends Migration {
  async up(): Promise<void> {}

  async down(): Promise<void> {}
}
