import { Migration } from '@mikro-orm/migrations';

/** Database functions only (svc_charge, svc_refund_once and svc_grant: their definitions are in ../functions); no schema change. */
export class Migration20261122000600 extends Migration {
  async up(): Promise<void> {}

  async down(): Promise<void> {}
}
