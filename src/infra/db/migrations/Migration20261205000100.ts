import { Migration } from '@mikro-orm/migrations';

/**
 * The database functions' record: each function's name and the SHA-256 of the text last applied
 * (database-functions.ts creates a function again when its module's text differs).
 */
export class Migration20261205000100 extends Migration {
  async up(): Promise<void> {
    this.addSql(`create table db_functions (name text primary key, checksum text not null, applied_at timestamptz not null default now())`);
  }

  async down(): Promise<void> {
    this.addSql(`drop table db_functions`);
  }
}
