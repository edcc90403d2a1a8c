// Jest globalSetup: the browser tests drive the built console (dist/console). Build it when it is
// missing or older than its sources or the schema, so `npm test` on a fresh clone works and a
// stale build is never tested. Plain CommonJS: it runs before ts-jest is in play.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'gql' || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

module.exports = async function buildConsoleIfStale() {
  const index = join(ROOT, 'dist', 'console', 'index.html');
  const sources = Math.max(newestMtime(join(ROOT, 'console')), statSync(join(ROOT, 'schema', 'schema.graphql')).mtimeMs);
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  process.stdout.write('\nbuilding the console (npm run build:console)…\n');
  execFileSync('npm', ['run', '--silent', 'build:console'], { cwd: ROOT, stdio: 'inherit' });
};
