/**
 * Instances started together on an empty PostgreSQL database take turns at the migrations: both
 * open it, neither dies (without the lock, one can die in the first migration on a unique-index
 * race inside PostgreSQL's catalog); an instance starting on a database already current opens
 * it without the lock. Runs in the DATABASE_URL pass only.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/infra/db/orm';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { DATABASE_FUNCTIONS } from '../../src/infra/db/functions';
import { Client } from 'pg';
import { pollUntil } from '../support/poll';

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

withPostgres('an instance opening a database already current does not wait for the migration lock, and one finding a function changed takes it', async () => {
  const scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_migrate');
  const dir = mkdtempSync(join(tmpdir(), 'gw-migrate-'));
  const holder = new Client({ connectionString: scratch.url });
  try {
    await (await openDatabase({ databaseUrl: scratch.url, dataDir: dir })).close();
    // Another instance is migrating (it holds the lock) while this one starts on the current schema.
    await holder.connect();
    await holder.query(`select pg_advisory_lock(hashtext('svc-gateway:migrations'))`);
    const current = await openDatabase({ databaseUrl: scratch.url, dataDir: dir });
    expect(await current.db.one(`select count(*)::int as n from db_functions`)).toEqual({ n: DATABASE_FUNCTIONS.length });
    // A function whose applied text is not this version's: the instance waits its turn, then applies it.
    await current.db.run(`update db_functions set checksum = 'stale' where name = ?`, [DATABASE_FUNCTIONS[0].name]);
    await current.close();
    let opened = false;
    const behind = openDatabase({ databaseUrl: scratch.url, dataDir: dir }).then((h) => ((opened = true), h));
    const waiting = await pollUntil(
      async () => Number((await holder.query(`select count(*) as n from pg_locks where locktype = 'advisory' and not granted`)).rows[0].n),
      (n) => n === 1,
      10_000,
    );
    expect([waiting, opened]).toEqual([1, false]);
    await holder.query(`select pg_advisory_unlock(hashtext('svc-gateway:migrations'))`);
    const updated = await behind;
    expect(await updated.db.one(`select checksum <> 'stale' as fresh from db_functions where name = ?`, [DATABASE_FUNCTIONS[0].name])).toEqual({ fresh: true });
    await updated.close();
  } finally {
    await holder.end().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    await scratch.drop();
  }
});
