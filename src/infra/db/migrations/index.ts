import { Migration20261122000000 } from './Migration20261122000000';
import { Migration20261122000100 } from './Migration20261122000100';
import { Migration20261122000200 } from './Migration20261122000200';
import { Migration20261122000300 } from './Migration20261122000300';
import { Migration20261122000400 } from './Migration20261122000400';
import { Migration20261122000500 } from './Migration20261122000500';
import { Migration20261122000600 } from './Migration20261122000600';
import { Migration20261122000700 } from './Migration20261122000700';
import { Migration20261123000000 } from './Migration20261123000000';
import { Migration20261124000000 } from './Migration20261124000000';
import { Migration20261125000000 } from './Migration20261125000000';
import { Migration20261126000000 } from './Migration20261126000000';
import { Migration20261127000000 } from './Migration20261127000000';
import { Migration20261128000000 } from './Migration20261128000000';
import { Migration20261129000000 } from './Migration20261129000000';
import { Migration20261130000000 } from './Migration20261130000000';
import { Migration20261201000000 } from './Migration20261201000000';
import { Migration20261202000000 } from './Migration20261202000000';
import { Migration20261203000000 } from './Migration20261203000000';
import { Migration20261204000000 } from './Migration20261204000000';
import { Migration20261205000000 } from './Migration20261205000000';
import { Migration20261205000100 } from './Migration20261205000100';

/** Every migration, in order. Listed explicitly so compiled and ts-jest runs find the same set. */
export const migrationsList = [
  { name: 'Migration20261122000000', class: Migration20261122000000 },
  { name: 'Migration20261122000100', class: Migration20261122000100 },
  { name: 'Migration20261122000200', class: Migration20261122000200 },
  { name: 'Migration20261122000300', class: Migration20261122000300 },
  { name: 'Migration20261122000400', class: Migration20261122000400 },
  { name: 'Migration20261122000500', class: Migration20261122000500 },
  { name: 'Migration20261122000600', class: Migration20261122000600 },
  { name: 'Migration20261122000700', class: Migration20261122000700 },
  { name: 'Migration20261123000000', class: Migration20261123000000 },
  { name: 'Migration20261124000000', class: Migration20261124000000 },
  { name: 'Migration20261125000000', class: Migration20261125000000 },
  { name: 'Migration20261126000000', class: Migration20261126000000 },
  { name: 'Migration20261127000000', class: Migration20261127000000 },
  { name: 'Migration20261128000000', class: Migration20261128000000 },
  { name: 'Migration20261129000000', class: Migration20261129000000 },
  { name: 'Migration20261130000000', class: Migration20261130000000 },
  { name: 'Migration20261201000000', class: Migration20261201000000 },
  { name: 'Migration20261202000000', class: Migration20261202000000 },
  { name: 'Migration20261203000000', class: Migration20261203000000 },
  { name: 'Migration20261204000000', class: Migration20261204000000 },
  { name: 'Migration20261205000000', class: Migration20261205000000 },
  { name: 'Migration20261205000100', class: Migration20261205000100 },
];
