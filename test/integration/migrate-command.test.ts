/**
 * Migrations as a step of their own: `node dist/src/main.js migrate` applies every migration and
 * database function to a fresh database and exits 0, says there is nothing to apply on a current
 * one, and an instance started with MIGRATE_ON_START=false refuses a schema behind its version and
 * opens a current one as it is. Embedded, on an empty DATA_DIR of the test's; with DATABASE_URL, on
 * an empty database of the test's.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { MIGRATION_NAMES } from '../../src/infra/db/migrations/names';
import { DATABASE_FUNCTIONS } from '../../src/infra/db/functions';
import { openDatabase, SchemaBehind } from '../../src/infra/db/orm';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { newTestStore } from '../support/test-store';

const MAIN = join(__dirname, '..', '..', 'dist', 'src', 'main.js');
let dataDir: string;
let scratch: { url: string; drop: () => Promise<void> } | undefined;
beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'gw-migrate-cmd-'));
  scratch = process.env.DATABASE_URL ? await createScratchDatabase(process.env.DATABASE_URL, 'gw_migrate_cmd') : undefined;
});
afterEach(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await scratch?.drop();
});

const store = () => ({ DATA_DIR: dataDir, ...(scratch ? { DATABASE_URL: scratch.url } : {}) });

/** Runs the entry point with `args`; answers its exit code and the JSON lines it logged. */
async function main(args: string[], env: Record<string, string> = {}): Promise<{ code: number; lines: any[]; stderr: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', LOG_LEVEL: 'info', PORT: '0', ...store(), ...env };
  delete childEnv.REDIS_URL;
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [MAIN, ...args], { env: childEnv, timeout: 60_000 });
    return {
      code: 0,
      lines: stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l)),
      stderr,
    };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, lines: [], stderr: e.stderr };
  }
}

test('migrate applies everything to a fresh database and exits, then finds nothing to apply', async () => {
  const first = await main(['migrate']);
  expect(first.code).toBe(0);
  expect(first.lines.at(-1)).toMatchObject({
    msg: 'migrations applied',
    migrations: [...MIGRATION_NAMES],
    functions: DATABASE_FUNCTIONS.map((f) => f.name),
  });
  const again = await main(['migrate']);
  expect(again.code).toBe(0);
  expect(again.lines.at(-1)).toMatchObject({ msg: 'the database is current: nothing to apply', migrations: [], functions: [] });
}, 90_000);

test('MIGRATE_ON_START=false: a fresh database stops the start, naming the migrate step; a migrated one opens as it is', async () => {
  const refused = await main([], { MIGRATE_ON_START: 'false' });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('MIGRATE_ON_START=false: run the migrations first (node dist/src/main.js migrate)');
  await expect(openDatabase({ dataDir, databaseUrl: scratch?.url, migrate: false })).rejects.toBeInstanceOf(SchemaBehind);

  // A copy of the run's migrated database (test-store.ts), as the migrate step leaves one.
  const migrated = await newTestStore('migrated');
  try {
    const opened = await openDatabase({ dataDir: migrated.dataDir, databaseUrl: migrated.databaseUrl, migrate: false });
    expect(await opened.db.one(`select count(*)::int as n from mikro_orm_migrations`)).toEqual({ n: MIGRATION_NAMES.length });
    await opened.close();
  } finally {
    await migrated.remove();
  }
}, 90_000);
