// Jest globalSetup: builds what the tests run as real programs, once, before any test worker
// starts. The child-process tests run the compiled service (dist/src/main.js); the browser tests
// drive the built console (dist/console). Each is rebuilt when missing or older than its sources,
// so `npm test` on a fresh clone works and a stale build is never tested. Building here, not in a
// test file, matters: two workers compiling at once rewrote files under a running child, which
// then loaded a half-written module. Plain CommonJS: it runs before ts-jest is in play.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === 'gql' || entry.name === 'node_modules') continue;
    newest = Math.max(newest, newestMtime(join(path, entry.name)));
  }
  return newest;
}

function isStale(output, sources) {
  if (!existsSync(output)) return true;
  return statSync(output).mtimeMs < Math.max(...sources.map((s) => newestMtime(join(ROOT, s))));
}

module.exports = async function buildWhatIsStale() {
  if (isStale(join(ROOT, 'dist', 'src', 'main.js'), ['src', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'])) {
    process.stdout.write('\nbuilding the service (tsc -p tsconfig.build.json)…\n');
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')], { cwd: ROOT, stdio: 'inherit' });
  }
  if (isStale(join(ROOT, 'dist', 'console', 'index.html'), ['console', join('schema', 'schema.graphql')])) {
    process.stdout.write('\nbuilding the console (npm run build:console)…\n');
    execFileSync('npm', ['run', '--silent', 'build:console'], { cwd: ROOT, stdio: 'inherit' });
  }
};
