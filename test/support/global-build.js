// Jest globalSetup: builds what the tests run as real programs, once, before any test worker
// starts. The child-process tests run the compiled service (dist/src/main.js); the browser tests
// drive the built console (dist/console). Each is rebuilt when missing or older than its sources
// (scripts/build-if-stale.js), so `npm test` on a fresh clone works and a stale build is never
// tested. Building here, not in a test file, matters: two workers compiling at once would rewrite
// files under a running child.
const { buildIfStale } = require('../../scripts/build-if-stale');
const { prepareDatabaseTemplate } = require('./database-template');
const { prepareOpenApiDocument } = require('./openapi-document');

module.exports = async function buildWhatIsStale() {
  buildIfStale((line) => process.stdout.write(`\n${line}`));
  // Then the run's migrated database, which every test gateway starts from.
  await prepareDatabaseTemplate();
  prepareOpenApiDocument();
};
