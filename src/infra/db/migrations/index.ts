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
import { Migration20261205000200 } from './Migration20261205000200';
import { Migration20261206000000 } from './Migration20261206000000';
import { Migration20261206000100 } from './Migration20261206000100';
import { Migration20261206000200 } from './Migration20261206000200';
import { Migration20261206000300 } from './Migration20261206000300';
import { Migration20261206000400 } from './Migration20261206000400';
import { Migration20261207004200 } from './Migration20261207004200';
import { Migration20261208000000 } from './Migration20261208000000';
import { Migration20261209000000 } from './Migration20261209000000';
import { Migration20261210000000 } from './Migration20261210000000';
import type { MigrationObject } from '@mikro-orm/core';
import { MIGRATION_NAMES, type MigrationName } from './names';

/** Each migration's class by its name: a name listed in names.ts without a class here, or a class without its name there, does not compile. */
const classes: Record<MigrationName, MigrationObject['class']> = {
  Migration20261122000000,
  Migration20261122000100,
  Migration20261122000200,
  Migration20261122000300,
  Migration20261122000400,
  Migration20261122000500,
  Migration20261122000600,
  Migration20261122000700,
  Migration20261123000000,
  Migration20261124000000,
  Migration20261125000000,
  Migration20261126000000,
  Migration20261127000000,
  Migration20261128000000,
  Migration20261129000000,
  Migration20261130000000,
  Migration20261201000000,
  Migration20261202000000,
  Migration20261203000000,
  Migration20261204000000,
  Migration20261205000000,
  Migration20261205000100,
  Migration20261205000200,
  Migration20261206000000,
  Migration20261206000100,
  Migration20261206000200,
  Migration20261206000300,
  Migration20261206000400,
  Migration20261207004200,
  Migration20261208000000,
  Migration20261209000000,
  Migration20261210000000,
};

/** Every migration, in order. Listed explicitly so the compiled build and the sources under Vitest find the same set. */
export const migrationsList: MigrationObject[] = MIGRATION_NAMES.map((name) => ({ name, class: classes[name] }));
