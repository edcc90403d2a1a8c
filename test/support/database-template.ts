/**
 * A migrated database made once per test run, which every test gateway starts from instead of
 * migrating its own: embedded, a PGlite data directory copied into the gateway's DATA_DIR; on
 * PostgreSQL, a template database that `create database … template` copies. The schema and the
 * database functions are applied by the gateway's own start-up code, loaded from the build the
 * global setup has just made (dist/src/infra/db/orm.js), so the copy is what a migrated database
 * is; a gateway that starts on it finds nothing to apply.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const PGLITE_VAR = 'TEST_PGLITE_TEMPLATE';
const PG_VAR = 'TEST_PG_TEMPLATE';
const built = createRequire(join(ROOT, 'dist', 'src', 'index.js'));

async function migrated(options: { dataDir: string; databaseUrl?: string }): Promise<void> {
  const { openDatabase } = built('./infra/db/orm.js') as typeof import('../../src/infra/db/orm');
  const handle = await openDatabase(options);
  await handle.close();
}

/**
 * Makes the run's template and names it in the environment the test workers inherit; answers what
 * drops it again.
 */
export async function prepareDatabaseTemplate(): Promise<() => Promise<void>> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'gw-template-'));
    await migrated({ dataDir: dir });
    process.env[PGLITE_VAR] = join(dir, 'db');
    return async () => rmSync(dir, { recursive: true, force: true });
  }
  const { createScratchDatabase } = built('./infra/db/scratch-database.js') as typeof import('../../src/infra/db/scratch-database');
  const scratch = await createScratchDatabase(baseUrl, 'gw_template');
  await migrated({ databaseUrl: scratch.url, dataDir: tmpdir() });
  process.env[PG_VAR] = new URL(scratch.url).pathname.slice(1);
  return scratch.drop;
}

/** Gives an embedded gateway's DATA_DIR the run's migrated database (nothing when there is none). */
export function seedDataDir(dataDir: string): void {
  const template = process.env[PGLITE_VAR];
  if (template) cpSync(template, join(dataDir, 'db'), { recursive: true });
}

/** The template a scratch PostgreSQL database is copied from, when the run made one. */
export const postgresTemplate = (): string | undefined => process.env[PG_VAR];
