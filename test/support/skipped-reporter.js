// A Jest reporter: at the end of a run, the test files that skipped tests, how many, and what each
// needs that this run did not have (read from the file's own `… ? describe : describe.skip`
// condition). A plain `npm test` skips the files that need PostgreSQL and Redis; it says so last.
const { readFileSync } = require('node:fs');
const { relative } = require('node:path');

const NEEDS = [
  [/process\.env\.DATABASE_URL/, 'DATABASE_URL'],
  [/process\.env\.REDIS_URL/, 'REDIS_URL'],
  [/hasRedisServer\(\)/, 'redis-server on the PATH'],
  [/hasCaddy/, 'caddy on the PATH'],
  [/ffprobe/i, 'ffprobe on the PATH'],
  [/withKubectl|hasKubectl/, 'kubectl on the PATH'],
];

/** What a file's skip conditions ask for: the lines that choose between a test and its skip. */
function needsOf(file) {
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

class SkippedReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const skipped = results.testResults.filter((r) => r.numPendingTests > 0);
    if (skipped.length === 0) return;
    const total = skipped.reduce((n, r) => n + r.numPendingTests, 0);
    const lines = skipped.map((r) => {
      const needs = needsOf(r.testFilePath);
      const why = needs.length > 0 ? `needs ${needs.join(' and ')}` : 'skipped in the file';
      return `  ${relative(this.rootDir, r.testFilePath)}: ${r.numPendingTests} skipped (${why})`;
    });
    process.stderr.write(`\n${total} tests skipped in ${skipped.length} files, for what this run did not have:\n${lines.join('\n')}\n`);
  }
}

module.exports = SkippedReporter;
