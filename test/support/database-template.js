// A migrated database made once per test run, which every test gateway starts from instead of
// migrating its own: embedded, a PGlite data directory copied into the gateway's DATA_DIR;
// on PostgreSQL, a template database that `create database … template` copies. The schema and
// the database functions are applied by the gateway's own start-up code (dist/src/infra/db/orm.js),
// so the copy is what a migrated database is; a gateway that starts on it finds nothing to apply.
// Plain CommonJS: Jest's globalSetup and globalTeardown run it outside ts-jest.
const { cpSync, mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { randomBytes } = require('node:crypto');

const ROOT = join(__dirname, '..', '..');
const PGLITE_VAR = 'TEST_PGLITE_TEMPLATE';
const PG_VAR = 'TEST_PG_TEMPLATE';

async function migrated(options) {
  const { openDatabase } = require(join(ROOT, 'dist', 'src', 'infra', 'db', 'orm.js'));
  const handle = await openDatabase(options);
  await handle.close();
}

/** Makes the run's template and names it in the environment the test workers inherit. */
async function prepareDatabaseTemplate() {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'gw-template-'));
    await migrated({ dataDir: dir });
    process.env[PGLITE_VAR] = join(dir, 'db');
    return;
  }
  const { createScratchDatabase } = require(join(ROOT, 'dist', 'src', 'infra', 'db', 'scratch-database.js'));
  const scratch = await createScratchDatabase(baseUrl, `gw_template_${randomBytes(3).toString('hex')}`);
  await migrated({ databaseUrl: scratch.url, dataDir: tmpdir() });
  process.env[PG_VAR] = new URL(scratch.url).pathname.slice(1);
}

async function dropDatabaseTemplate() {
  const dir = process.env[PGLITE_VAR];
  if (dir) rmSync(join(dir, '..'), { recursive: true, force: true });
  const name = process.env[PG_VAR];
  if (name && process.env.DATABASE_URL) {
    const { Client } = require('pg');
    const client = new Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await client.query(`drop database if exists ${name} with (force)`).finally(() => client.end());
  }
}

/** Gives an embedded gateway's DATA_DIR the run's migrated database (nothing when there is none). */
function seedDataDir(dataDir) {
  const template = process.env[PGLITE_VAR];
  if (template) cpSync(template, join(dataDir, 'db'), { recursive: true });
}

/** The template a scratch PostgreSQL database is copied from, when the run made one. */
const postgresTemplate = () => process.env[PG_VAR];

module.exports = { prepareDatabaseTemplate, dropDatabaseTemplate, seedDataDir, postgresTemplate };
