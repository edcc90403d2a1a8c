/**
 * Every migration's name, in order: what start-up compares with the database's applied list, so
 * a database already current is opened without loading the migration runner (index.ts pairs each
 * name with its class, and the type checker holds the two lists equal).
 */
export const MIGRATION_NAMES = [
  'Migration20261122000000',
  'Migration20261122000100',
  'Migration20261122000200',
  'Migration20261122000300',
  'Migration20261122000400',
  'Migration20261122000500',
  'Migration20261122000600',
  'Migration20261122000700',
  'Migration20261123000000',
  'Migration20261124000000',
  'Migration20261125000000',
  'Migration20261126000000',
  'Migration20261127000000',
  'Migration20261128000000',
  'Migration20261129000000',
  'Migration20261130000000',
  'Migration20261201000000',
  'Migration20261202000000',
  'Migration20261203000000',
  'Migration20261204000000',
  'Migration20261205000000',
  'Migration20261205000100',
  'Migration20261205000200',
  'Migration20261206000000',
  'Migration20261206000100',
  'Migration20261206000200',
  'Migration20261206000300',
  'Migration20261206000400',
  'Migration20261207004200',
  'Migration20261208000000',
  'Migration20261209000000',
  'Migration20261210000000',
] as const;

export type MigrationName = (typeof MIGRATION_NAMES)[number];
