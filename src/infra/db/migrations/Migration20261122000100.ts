import { Migration } from '@mikro-orm/migrations';

/** Database functions only (svc_place_hold and svc_settle_hold: their definitions are in ../functions); no schema change. */
export class Migration20261122000100 extends Migration {
  async up(): Promise<void> {}

  async down(): Promise<void> {}
}
