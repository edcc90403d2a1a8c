import { Migration } from '@mikro-orm/migrations';

/** Database functions only (svc_take_lease and svc_charge: their definitions are in ../functions); no schema change. */
export class Migration20261204000000 extends Migration {
  async up(): Promise<void> {}

  async down(): Promise<void> {}
}
