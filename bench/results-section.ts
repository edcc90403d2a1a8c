/**
 * A phase run on its own (BENCH_ONLY=fanout, BENCH_ONLY=outside) replaces its own section of an
 * existing results file and its key of the JSON, and leaves the other phases' as they were.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `markdown` starts with a blank line and `heading` (`## …`), as every phase's section does. */
export function replaceSection(resultsDir: string, heading: string, markdown: string, key: string, value: object, name = 'latest'): void {
  const mdPath = join(resultsDir, `${name}.md`);
  const jsonPath = join(resultsDir, `${name}.json`);
  const md = existsSync(mdPath) ? readFileSync(mdPath, 'utf8') : '';
  const from = md.indexOf(`\n${heading}`);
  // The sections after it (another phase's) stay where they are.
  const next = from >= 0 ? md.indexOf('\n## ', from + 1) : -1;
  const before = from >= 0 ? md.slice(0, from) : md;
  const after = next >= 0 ? md.slice(next) : '';
  writeFileSync(mdPath, before + markdown + after);
  const json = existsSync(jsonPath) ? (JSON.parse(readFileSync(jsonPath, 'utf8')) as Record<string, unknown>) : {};
  writeFileSync(jsonPath, JSON.stringify({ ...json, [key]: value }, null, 2) + '\n');
}
