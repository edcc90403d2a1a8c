// Jest globalTeardown: drops the run's migrated database template (test/support/database-template.js).
const { dropDatabaseTemplate } = require('./database-template');

module.exports = async function dropTemplate() {
  await dropDatabaseTemplate();
};
