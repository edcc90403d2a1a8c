import { randomBytes } from 'node:crypto';
import { Client } from 'pg';

/**
 * A throwaway PostgreSQL database beside the one `baseUrl` names, for tests and the bench: each
 * gateway they start gets its own, so runs side by side never share jobs or work rows. Given a
 * `template` (a migrated database no session is connected to), it starts as a copy of it.
 */
export async function createScratchDatabase(baseUrl: string, prefix: string, template?: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const run = async (sql: string) => {
    const client = new Client({ connectionString: baseUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(template ? `create database ${name} template ${template}` : `create database ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}
