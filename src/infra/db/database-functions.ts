/**
 * Applies the database functions (functions/) after the migrations, under the same advisory
 * lock: each whose text differs from the one last applied (its SHA-256 in `db_functions`) is
 * created again, so a change to a function is an edit of its one module, not a migration. A change
 * of a function's arguments or return type still needs a migration that drops the old one first
 * (`create or replace` cannot change them).
 */
import { createHash } from 'node:crypto';
import { DATABASE_FUNCTIONS, type DatabaseFunction } from './functions';

type Execute = (sql: string, params?: unknown[]) => Promise<unknown>;

const checksum = (f: DatabaseFunction) => createHash('sha256').update(f.sql).digest('hex');

const appliedChecksums = async (execute: Execute) =>
  new Map(((await execute(`select name, checksum from db_functions`)) as Array<{ name: string; checksum: string }>).map((r) => [r.name, r.checksum]));

/** Whether every function's text is the one last applied. */
export async function functionsCurrent(execute: Execute, functions: readonly DatabaseFunction[] = DATABASE_FUNCTIONS): Promise<boolean> {
  const applied = await appliedChecksums(execute);
  return functions.every((f) => applied.get(f.name) === checksum(f));
}

/** Answers the names of the functions it created (none when every one was current). */
export async function applyDatabaseFunctions(execute: Execute, functions: readonly DatabaseFunction[] = DATABASE_FUNCTIONS): Promise<string[]> {
  const applied = await appliedChecksums(execute);
  const created: string[] = [];
  for (const f of functions) {
    const sum = checksum(f);
    if (applied.get(f.name) === sum) continue;
    await execute(f.sql);
    await execute(`insert into db_functions (name, checksum) values (?, ?) on conflict (name) do update set checksum = excluded.checksum, applied_at = now()`, [
      f.name,
      sum,
    ]);
    created.push(f.name);
  }
  return created;
}
