/**
 * A Vitest reporter: at the end of a run, the test files that skipped tests, how many, and what each
 * needs that this run did not have (read from the file's own `… ? describe : describe.skip`
 * condition). A plain `npm test` skips the files that need PostgreSQL and Redis; it says so last.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule, Vitest } from 'vitest/node' with { 'resolution-mode': 'import' };

const NEEDS: [RegExp, string][] = [
  [/process\.env\.DATABASE_URL/, 'DATABASE_URL'],
  [/process\.env\.REDIS_URL/, 'REDIS_URL'],
  [/hasRedisServer\(\)/, 'redis-server on the PATH'],
  [/hasCaddy/, 'caddy on the PATH'],
  [/ffprobe/i, 'ffprobe on the PATH'],
  [/withKubectl|hasKubectl/, 'kubectl on the PATH'],
];

/** What a file's skip conditions ask for: the lines that choose between a test and its skip. */
function needsOf(file: string): string[] {
  let source = '';
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const conditions = source
    .split('\n')
    .filter((line) => /\.skip\b/.test(line))
    .join('\n');
  return NEEDS.filter(([pattern]) => pattern.test(conditions)).map(([, name]) => name);
}

export default class SkippedReporter implements Reporter {
  private root = process.cwd();

  onInit(vitest: Vitest): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(modules: readonly TestModule[]): void {
    const skipped = modules
      .map((m) => ({ file: m.moduleId, count: [...m.children.allTests('skipped')].length }))
      .filter((m) => m.count > 0)
      .sort((a, b) => a.file.localeCompare(b.file));
    if (skipped.length === 0) return;
    const total = skipped.reduce((n, m) => n + m.count, 0);
    const lines = skipped.map(({ file, count }) => {
      const needs = needsOf(file);
      const why = needs.length > 0 ? `needs ${needs.join(' and ')}` : 'skipped in the file';
      return `  ${relative(this.root, file)}: ${count} skipped (${why})`;
    });
    process.stderr.write(`\n${total} tests skipped in ${skipped.length} files, for what this run did not have:\n${lines.join('\n')}\n`);
  }
}
