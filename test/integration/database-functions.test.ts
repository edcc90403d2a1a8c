/**
 * The database functions have one definition each (src/infra/db/functions) and are applied after
 * the migrations: a function whose text changed is created again, one that did not is left alone,
 * and a database migrated from nothing has every function the code calls.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServices, type TestServices } from '../support/test-services';
import { applyDatabaseFunctions } from '../../src/infra/db/database-functions';
import { DATABASE_FUNCTIONS } from '../../src/infra/db/functions';

let gw: TestServices;
beforeAll(async () => {
  gw = await startTestServices();
});
afterAll(async () => {
  await gw.close();
});

const execute = (sql: string, params?: unknown[]) => gw.database.db.all(sql, params ?? []);

test('a migrated database has every function, each recorded with the checksum of its one definition', async () => {
  const names = (await gw.database.db.all<{ proname: string }>(`select proname from pg_proc where proname like 'svc\\_%' order by 1`)).map((r) => r.proname);
  expect(names).toEqual(DATABASE_FUNCTIONS.map((f) => f.name).sort());
  expect(await applyDatabaseFunctions(execute)).toEqual([]);
  // Every function the code calls is defined, and defined once.
  const src = join(__dirname, '..', '..', 'src');
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : [join(dir, e.name)]));
  const all = files(src).filter((f) => f.endsWith('.ts'));
  const called = new Set(all.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\b(svc_[a-z_]+)\(/g)].map((m) => m[1]!)));
  for (const name of called) expect(DATABASE_FUNCTIONS.map((f) => f.name)).toContain(name);
  const definitions = all.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/create (?:or replace )?function (svc_[a-z_]+)/gi)].map((m) => m[1]!));
  expect(definitions.sort()).toEqual(DATABASE_FUNCTIONS.map((f) => f.name).sort());
});

test('a function whose text changed is created again; an unchanged one is not', async () => {
  const v1 = { name: 'svc_test_answer', sql: `create or replace function svc_test_answer() returns int language sql as $$ select 1 $$` };
  const v2 = { ...v1, sql: v1.sql.replace('select 1', 'select 2') };
  expect(await applyDatabaseFunctions(execute, [v1])).toEqual(['svc_test_answer']);
  expect(await applyDatabaseFunctions(execute, [v1])).toEqual([]);
  expect(await gw.database.db.one(`select svc_test_answer() as n`)).toEqual({ n: 1 });
  expect(await applyDatabaseFunctions(execute, [v2])).toEqual(['svc_test_answer']);
  expect(await gw.database.db.one(`select svc_test_answer() as n`)).toEqual({ n: 2 });
  await gw.database.db.run(`drop function svc_test_answer()`);
  await gw.database.db.run(`delete from db_functions where name = 'svc_test_answer'`);
});
