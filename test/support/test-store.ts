import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { postgresTemplate, seedDataDir } from './database-template';

export interface TestStore {
  /** A DATA_DIR of its own: with no DATABASE_URL, it holds a copy of the run's migrated PGlite database. */
  dataDir: string;
  /** With DATABASE_URL set (CI's second run), a database of its own beside it, copied from the run's template. */
  databaseUrl?: string;
  /** Drops the database and removes the directory. */
  remove(): Promise<void>;
}

/** Where one test gateway (or one set of test services) keeps its data; `seed: false` leaves an embedded DATA_DIR empty. */
export async function newTestStore(name: string, options: { seed?: boolean } = {}): Promise<TestStore> {
  const dataDir = mkdtempSync(join(tmpdir(), `gw-${name}-`));
  const scratch = process.env.DATABASE_URL ? await createScratchDatabase(process.env.DATABASE_URL, `gw_${name}`, postgresTemplate()) : undefined;
  if (!scratch && options.seed !== false) seedDataDir(dataDir);
  return {
    dataDir,
    databaseUrl: scratch?.url,
    async remove() {
      await scratch?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
