/**
 * Vitest runs the TypeScript sources; one PGlite per test gateway. Files share their worker's loaded
 * modules (isolate: false): the gateway's 2,300 modules load once per worker, not once per file that
 * boots a gateway (docs/benchmarks.md, "The test suite's time").
 */
import { availableParallelism } from 'node:os';
import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);
/**
 * Packages resolved to their CommonJS builds, as the compiled service loads them: the ES build of
 * graphql-query-complexity imports graphql's own ES build, and two graphql modules in one process
 * refuse each other's types.
 */
const COMMON_JS = ['graphql', 'graphql-query-complexity'];

export default defineConfig({
  resolve: { alias: COMMON_JS.map((name) => ({ find: new RegExp(`^${name}$`), replacement: require.resolve(name) })) },
  test: {
    include: ['test/**/*.test.ts'],
    globals: true,
    setupFiles: ['test/support/per-file.ts'],
    // Builds the service (dist/src) and the console (dist/console) once, when missing or stale, then a
    // migrated database every test gateway copies (test/support/database-template.ts).
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    isolate: false,
    // Half again as many workers as cores: a file waiting on real time (a browser page, a child
    // process, a provider's token lifetime) leaves its core to another file's work.
    maxWorkers: Math.ceil(availableParallelism() * 1.5),
    // After-hooks in the order they are declared, as before-hooks: a file's own check that reads the
    // gateway is declared before the fixture that closes it.
    sequence: { hooks: 'list' },
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The run's last lines say which files skipped tests, and what they need (test/support/skipped-reporter.ts).
    reporters: ['default', 'test/support/skipped-reporter.ts'],
  },
});
