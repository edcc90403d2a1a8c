import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildGraphQLSchema, schemaSDL } from './schema';

/** `npm run schema`: writes the SDL the schema test compares against (run from dist/src/graphql). */
const SCHEMA_FILE = join(__dirname, '..', '..', '..', 'schema', 'schema.graphql');

if (require.main === module) {
  buildGraphQLSchema().then(
    (schema) => {
      mkdirSync(join(SCHEMA_FILE, '..'), { recursive: true });
      writeFileSync(SCHEMA_FILE, schemaSDL(schema));
      process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
    },
    (err) => {
      process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
