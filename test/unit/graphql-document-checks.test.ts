import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildGraphQLSchema } from '../../src/graphql/schema';
import { documentChecker } from '../../src/graphql/document-checks';

let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildGraphQLSchema();
});

test('a document text is parsed and validated once: the same text answers the same checked document', () => {
  const check = documentChecker(schema, false);
  const text = 'subscription { videoJobsUpdated { id status } }';
  const first = check(text);
  expect(first).toMatchObject({ ok: true, limitError: null, invalid: [] });
  expect(check(text)).toBe(first);
  // Another text is another document.
  expect(check(`${text} `)).not.toBe(first);
});

test('parse errors, shape bounds and validation errors are answered (and kept) like valid documents', () => {
  const check = documentChecker(schema, true);
  const broken = check('subscription {');
  expect(broken.ok).toBe(false);
  if (!broken.ok) expect(broken.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
  const deep = check(`{ ${'a { '.repeat(12)}b${' }'.repeat(12)} }`);
  expect(deep.ok && deep.limitError?.message).toMatch(/levels deep/);
  const unknown = check('subscription { noSuchField }');
  expect(unknown.ok && unknown.invalid[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  expect(check('subscription { noSuchField }')).toBe(unknown);
  // Production adds the introspection rule.
  const intro = check('{ __schema { types { name } } }');
  expect(intro.ok && intro.invalid.length).toBeGreaterThan(0);
});

test('long texts are checked every time, not kept', () => {
  const check = documentChecker(schema, false);
  const text = `subscription { videoJobsUpdated { id ${'status '.repeat(1500)}} }`;
  expect(text.length).toBeGreaterThan(8192);
  // Identity, not `not.toBe`: Vitest compares a failing `toBe`'s two sides deeply for its hint, and
  // two parsed documents of this size take half a minute to compare.
  expect(check(text) === check(text)).toBe(false);
});
