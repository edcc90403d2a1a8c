/** Jest runs the TypeScript sources through ts-jest; one PGlite per test file. */
const { availableParallelism } = require('node:os');

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  setupFiles: ['reflect-metadata'],
  // A dynamic import names its compiled file (`./migrations/index.js`), as Node needs; here it is the source.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // Builds the service (dist/src) and the console (dist/console) once, when missing or stale, then a
  // migrated database every test gateway copies (test/support/database-template.js).
  globalSetup: '<rootDir>/test/support/global-build.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  testTimeout: 60000,
  // Half again as many workers as cores: a file waiting on real time (a browser page, a child
  // process, a provider's token lifetime) leaves its core to another file's work. A number, not
  // '150%': Jest reads a percentage over 100 as a count of workers.
  maxWorkers: Math.ceil(availableParallelism() * 1.5),
  // The run's last lines say which files skipped tests, and what they need (test/support/skipped-reporter.js).
  reporters: ['default', '<rootDir>/test/support/skipped-reporter.js'],
};
