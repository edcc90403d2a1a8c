/**
 * Vitest's global setup, run once before any test worker starts: builds what the tests run as real
 * programs, then the run's migrated database and parsed OpenAPI document; its teardown drops both.
 * The child-process tests run the compiled service (dist/src/main.js); the browser tests drive the
 * built console (dist/console). Each is rebuilt when missing or older than its sources
 * (scripts/build-if-stale.js), so `npm test` on a fresh clone works and a stale build is never
 * tested. Building here, not in a test file, matters: two workers compiling at once would rewrite
 * files under a running child.
 */
import { buildIfStale } from '../../scripts/build-if-stale';
import { prepareDatabaseTemplate } from './database-template';
import { prepareOpenApiDocument } from './openapi-document';

export default async function setup(): Promise<() => Promise<void>> {
  buildIfStale((line: string) => process.stdout.write(`\n${line}`));
  // Then the run's migrated database, which every test gateway starts from.
  const dropTemplate = await prepareDatabaseTemplate();
  const dropDocument = prepareOpenApiDocument();
  return async () => {
    await dropTemplate();
    dropDocument();
  };
}
