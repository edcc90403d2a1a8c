// Builds what is stale, and nothing else: the service (dist/src) when a source under src/ or
// bench/ (or the TypeScript config, or the lockfile) is newer than dist/src/main.js, and the
// console (dist/console) when a source under console/ or the GraphQL schema is newer than its
// index.html. `npm start` runs it first, so a built tree starts at once; `npm run build` still
// builds everything; the test suite's globalSetup runs it too. Plain CommonJS: it runs before
// anything is compiled.
const { execFileSync } = require('node:child_process');
const { existsSync, readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');

const ROOT = join(__dirname, '..');

function newestMtime(path) {
  if (!existsSync(path)) return 0;
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

function buildIfStale(log = (line) => process.stdout.write(line)) {
  if (isStale(join(ROOT, 'dist', 'src', 'main.js'), ['src', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'])) {
    log('building the service (tsc -p tsconfig.build.json)…\n');
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')], {
      cwd: ROOT,
      stdio: 'inherit',
    });
  }
  if (isStale(join(ROOT, 'dist', 'console', 'index.html'), ['console', join('schema', 'schema.graphql')])) {
    log('building the console (npm run build:console)…\n');
    execFileSync('npm', ['run', '--silent', 'build:console'], { cwd: ROOT, stdio: 'inherit' });
  }
}

module.exports = { buildIfStale };

if (require.main === module) buildIfStale();
