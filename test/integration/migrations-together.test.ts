/**
 * Instances started together on an empty PostgreSQL database take turns at the migrations: both
 * open it, neither dies (without the lock, one can die in the first migration on a unique-index
 * race inside PostgreSQL's catalog). Runs in the DATABASE_URL pass only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/infra/db/orm';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';

const withPostgres = process.env.DATABASE_URL ? test : test.skip;

withPostgres('four instances migrating one empty database at once all open it, and every migration is applied once', async () => {
  const scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_migrate');
  const dirs = Array.from({ length: 4 }, () => mkdtempSync(join(tmpdir(), 'gw-migrate-')));
  try {
    const opened = await Promise.allSettled(dirs.map((dataDir) => openDatabase({ databaseUrl: scratch.url, dataDir })));
    const failures = opened.filter((o) => o.status === 'rejected').map((o) => String(o.reason));
    expect(failures).toEqual([]);
    const handles = opened.map((o) => (o as PromiseFulfilledResult<Awaited<ReturnType<typeof openDatabase>>>).value);
    const rows = await handles[0].db.all<{ name: string; n: string }>(`select name, count(*) as n from mikro_orm_migrations group by name having count(*) > 1`);
    expect(rows).toEqual([]);
    await Promise.all(handles.map((h) => h.close()));
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await scratch.drop();
  }
});
