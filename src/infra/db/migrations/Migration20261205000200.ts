import { Migration } from '@mikro-orm/migrations';

/**
 * A video job remembers the upstream route that accepted it (`route_id`): a model may have
 * several routes, and its polls, cancels and results must go to the one that has the job.
 */
export class Migration20261205000200 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table video_jobs add column route_id text`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table video_jobs drop column route_id`);
  }
}
