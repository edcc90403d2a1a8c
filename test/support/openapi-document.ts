/**
 * docs/openapi.yaml parsed once per test run (parsing its YAML takes longer than anything else a
 * test file does to check its exchanges): the global setup writes it as JSON and names the file in
 * the environment the test workers inherit; each worker reads the JSON (test/support/openapi-schemas.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';

const VAR = 'TEST_OPENAPI_JSON';

/** Writes the run's document and names it in the environment the test workers inherit; answers what removes it. */
export function prepareOpenApiDocument(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'gw-openapi-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.yaml'), 'utf8'))));
  process.env[VAR] = file;
  return () => rmSync(dir, { recursive: true, force: true });
}

/** The run's parsed document, or undefined when the run made none (a file run outside the global setup). */
export function parsedOpenApiDocument(): Record<string, unknown> | undefined {
  const file = process.env[VAR];
  return file ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : undefined;
}
