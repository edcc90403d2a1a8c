/** Jest runs the TypeScript sources through ts-jest; one PGlite per test file. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  setupFiles: ['reflect-metadata'],
  // Builds the console (dist/console) for the browser tests when it is missing or stale.
  globalSetup: '<rootDir>/test/support/console-build.js',
  testTimeout: 60000,
  maxWorkers: 2,
};
