// docs/openapi.yaml parsed once per test run (parsing its YAML takes longer than anything else a
// test file does to check its exchanges): globalSetup writes it as JSON and names the file in the
// environment the test workers inherit; each file reads the JSON (test/support/openapi-schemas.ts).
// Plain CommonJS: Jest's globalSetup and globalTeardown run it outside ts-jest.
const { mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { parse } = require('yaml');

const VAR = 'TEST_OPENAPI_JSON';

function prepareOpenApiDocument() {
  const dir = mkdtempSync(join(tmpdir(), 'gw-openapi-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(parse(readFileSync(join(__dirname, '..', '..', 'docs', 'openapi.yaml'), 'utf8'))));
  process.env[VAR] = file;
}

function dropOpenApiDocument() {
  const file = process.env[VAR];
  if (file) rmSync(join(file, '..'), { recursive: true, force: true });
}

/** The run's parsed document, or undefined when the run made none (a file run outside `jest`'s globalSetup). */
function parsedOpenApiDocument() {
  const file = process.env[VAR];
  return file ? JSON.parse(readFileSync(file, 'utf8')) : undefined;
}

module.exports = { prepareOpenApiDocument, dropOpenApiDocument, parsedOpenApiDocument };
