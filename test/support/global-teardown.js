// Jest globalTeardown: drops the run's migrated database template (test/support/database-template.js)
// and its parsed OpenAPI document (test/support/openapi-document.js).
const { dropDatabaseTemplate } = require('./database-template');
const { dropOpenApiDocument } = require('./openapi-document');

module.exports = async function dropTemplate() {
  await dropDatabaseTemplate();
  dropOpenApiDocument();
};
