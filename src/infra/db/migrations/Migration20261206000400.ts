import { Migration } from '@mikro-orm/migrations';

/**
 * What the OpenAI-shaped video API shows of a job: its progress (0 to 100, as the upstream last
 * reported it), its thumbnail, when it ended, and whether its owner deleted it (a deleted job
 * and its media are gone from every view; its ledger entries stay).
 */
export class Migration20261206000400 extends Migration {
  async up(): Promise<void> {
    this.addSql(`alter table video_jobs add column progress smallint not null default 0 check (progress between 0 and 100)`);
    this.addSql(`alter table video_jobs add column thumbnail_media_id text`);
    this.addSql(`alter table video_jobs add column finished_at timestamptz`);
    this.addSql(`alter table video_jobs add column deleted_at timestamptz`);
  }

  async down(): Promise<void> {
    this.addSql(`alter table video_jobs drop column deleted_at`);
    this.addSql(`alter table video_jobs drop column finished_at`);
    this.addSql(`alter table video_jobs drop column thumbnail_media_id`);
    this.addSql(`alter table video_jobs drop column progress`);
  }
}
