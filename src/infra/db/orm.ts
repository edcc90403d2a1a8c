import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Client } from 'pg';
import type { Database, SqlExecutor } from '../../domain/ports/database';
import { KnexDatabase } from './knex-database';
import type { DatabaseState } from './database-state';
import { DatabaseHealth } from './db-unavailable';
import { PgDirectExecutor } from './pg-direct';
import { PgProbe } from './pg-probe';
import { MIGRATION_NAMES } from './migrations/names';
import { applyDatabaseFunctions, functionsCurrent } from './database-functions';

// mikro-orm-pglite ships a CommonJS build, but its type declarations are ES-module flavoured, so
// TypeScript (module Node16) refuses a static import from this CommonJS file.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { PGliteDriver } = require('mikro-orm-pglite') as { PGliteDriver: unknown };

export interface DatabaseHandle {
  orm: MikroORM;
  db: Database;
  /** For the statements every billed call runs: `pg` directly on PostgreSQL (pg-direct.ts), `db` itself on PGlite. */
  hot: SqlExecutor;
  /** Whether the database takes a `select 1` within `timeoutMs`, for /healthz (PgProbe on PostgreSQL, KnexDatabase.probe on PGlite). */
  probe(timeoutMs: number): Promise<DatabaseState>;
  close(): Promise<void>;
}

/**
 * Opens PostgreSQL when a URL is given, else embedded PGlite in `<dataDir>/db` (same SQL, same
 * migrations), and applies the checked-in migrations before anything else runs.
 */
export async function openDatabase(options: {
  databaseUrl?: string;
  dataDir: string;
  /** false: open the database as it is; a schema behind this version is refused (SchemaBehind). Default true. */
  migrate?: boolean;
  /** Told what was applied (nothing, on a database already current). */
  onMigrated?: (applied: Applied) => void;
  onHealthChange?: (up: boolean, err?: unknown) => void;
  /** Where knex's own warnings go (a dropped pool connection, say); it writes them to the console otherwise, outside the JSON log. */
  onDriverWarning?: (message: string) => void;
}): Promise<DatabaseHandle> {
  const common: Options = {
    // The migration runner and the migrations' classes are loaded only when something is to be applied (migrateOnce).
    migrations: { transactional: true, allOrNothing: true, snapshot: false, silent: true },
    discovery: { warnWhenNoEntities: false },
    entities: [],
    debug: false,
  };
  let orm: MikroORM;
  if (options.databaseUrl) {
    orm = await MikroORM.init({ ...common, clientUrl: options.databaseUrl, pool: { min: 0, max: 10, acquireTimeoutMillis: 10_000 } });
  } else {
    const dir = resolve(options.dataDir, 'db');
    mkdirSync(dir, { recursive: true });
    // PGlite is imported dynamically (it is an ES module); the driver owns its lifecycle.
    orm = await MikroORM.init({
      ...common,
      driver: PGliteDriver as Options['driver'],
      dbName: 'postgres',
      driverOptions: {
        connection: {
          pglite: () => {
            return new PGlite(dir);
          },
        },
      },
    });
  }
  try {
    if (options.migrate === false) await refuseUnlessCurrent(orm);
    else {
      const applied = await migrateOnce(orm, options.databaseUrl);
      options.onMigrated?.(applied);
    }
  } catch (err) {
    await orm.close(true).catch(() => undefined);
    throw err;
  }
  const connection = orm.em.getConnection();
  if (options.onDriverWarning) routeKnexLog(connection.getKnex(), options.onDriverWarning);
  const health = new DatabaseHealth(options.onHealthChange);
  const db = new KnexDatabase(connection.getKnex(), options.databaseUrl ? 'postgresql' : 'pglite', health);
  const direct = options.databaseUrl ? new PgDirectExecutor(options.databaseUrl, health) : undefined;
  // On PostgreSQL the probe has a connection of its own (pg-probe.ts); PGlite runs one statement at a time whoever sends it.
  const ownProbe = options.databaseUrl ? new PgProbe(options.databaseUrl, health) : undefined;
  return {
    orm,
    db,
    hot: direct ?? db,
    probe: (ms) => (ownProbe ?? db).probe(ms),
    close: async () => {
      await ownProbe?.close();
      await direct?.close();
      await orm.close(true);
    },
  };
}

/** knex's Logger keeps the functions it writes through (console.warn by default) as `_warn` / `_error`. */
function routeKnexLog(knex: unknown, write: (message: string) => void): void {
  const logger = (knex as { client?: { logger?: Record<string, unknown> } }).client?.logger;
  if (!logger) return;
  const toLog = (message: unknown) => write(String(message));
  logger._warn = toLog;
  logger._error = toLog;
}

type Execute = (sql: string, params?: unknown[]) => Promise<unknown>;

/** Whether every migration is applied and every database function current: nothing for start-up to do (a restart, a second instance). */
async function schemaCurrent(execute: Execute): Promise<boolean> {
  const [table] = (await execute(`select to_regclass('mikro_orm_migrations') is not null as present`)) as Array<{ present: boolean }>;
  if (!table?.present) return false;
  const applied = new Set(((await execute(`select name from mikro_orm_migrations`)) as Array<{ name: string }>).map((r) => r.name));
  return MIGRATION_NAMES.every((name) => applied.has(name)) && (await functionsCurrent(execute));
}

/** What a migration run applied: the migrations' names and the functions created again. */
export interface Applied {
  migrations: string[];
  functions: string[];
}

/** The database's schema is older than this version's, and this instance was told not to migrate it. */
export class SchemaBehind extends Error {
  constructor() {
    super('The database schema is behind this version and MIGRATE_ON_START=false: run the migrations first (node dist/src/main.js migrate).');
  }
}

async function refuseUnlessCurrent(orm: MikroORM): Promise<void> {
  const connection = orm.em.getConnection();
  if (!(await schemaCurrent((sql, params) => connection.execute(sql, params ?? [])))) throw new SchemaBehind();
}

/** The migrations, applied through MikroORM's migrator (loaded here, when there is something to apply). */
async function applyMigrations(orm: MikroORM): Promise<string[]> {
  const [{ Migrator }, { migrationsList }] = await Promise.all([import('@mikro-orm/migrations'), import('./migrations/index.js')]);
  orm.config.set('migrations', { ...orm.config.get('migrations'), migrationsList });
  return (await new Migrator(orm.em).up()).map((m) => m.name);
}

/**
 * Runs the migrations with PostgreSQL's advisory lock held on a connection of its own, so that
 * instances started together on an empty database take turns: the second finds everything
 * applied. Without it, one can die in the first migration ("duplicate key value violates unique
 * constraint pg_type_typname_nsp_index"). PGlite has one process. A database found current
 * before the lock is left as it is, lock untaken.
 */
async function migrateOnce(orm: MikroORM, databaseUrl: string | undefined): Promise<Applied> {
  const connection = orm.em.getConnection();
  const execute: Execute = (sql, params) => connection.execute(sql, params ?? []);
  if (await schemaCurrent(execute)) return { migrations: [], functions: [] };
  // The schema, then the functions over it (database-functions.ts), in one turn of the lock.
  const migrate = async (): Promise<Applied> => ({ migrations: await applyMigrations(orm), functions: await applyDatabaseFunctions(execute) });
  if (!databaseUrl) return migrate();
  const lock = new Client({ connectionString: databaseUrl });
  await lock.connect();
  try {
    await lock.query(`select pg_advisory_lock(hashtext('svc-gateway:migrations'))`);
    return await migrate();
  } finally {
    // Ending the session releases the lock, whatever happened above.
    await lock.end().catch(() => undefined);
  }
}
