import { Migration20261122000000 } from './Migration20261122000000';

/** Every migration, in order. Listed explicitly so compiled and ts-jest runs find the same set. */
export const migrationsList = [{ name: 'Migration20261122000000', class: Migration20261122000000 }];
