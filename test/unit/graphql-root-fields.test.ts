import { buildSchema, parse, specifiedRules, validate } from 'graphql';
import { ONE_MUTATION_FIELD, OneMutationFieldRule } from '../../src/graphql/root-fields';

/** One root field per mutation operation, counted through fragments (root-fields.ts). */
const schema = buildSchema(`
  type Job { id: ID! }
  type Query { job: Job }
  type Mutation { queueVideo(p: String): Job! createApiKey: String! }
`);
const errors = (doc: string) => validate(schema, parse(doc), [...specifiedRules, OneMutationFieldRule]).map((e) => e.message);

test('a mutation with one field passes, with __typename beside it under any alias', () => {
  expect(errors('mutation { queueVideo(p: "a") { id } }')).toEqual([]);
  expect(errors('mutation { __typename queueVideo(p: "a") { id } t: __typename }')).toEqual([]);
  // Fields sharing a response key run once: one field.
  expect(errors('mutation { queueVideo(p: "a") { id } queueVideo(p: "a") { __typename } }')).toEqual([]);
  // Queries may select many.
  expect(errors('{ a: job { id } b: job { id } }')).toEqual([]);
});

test('a mutation with two fields is refused, however they are reached', () => {
  expect(errors('mutation { a0: queueVideo(p: "a") { id } a1: queueVideo(p: "b") { id } }')).toEqual([ONE_MUTATION_FIELD]);
  expect(errors('mutation { queueVideo(p: "a") { id } createApiKey }')).toEqual([ONE_MUTATION_FIELD]);
  expect(errors('mutation { queueVideo(p: "a") { id } ... on Mutation { createApiKey } }')).toEqual([ONE_MUTATION_FIELD]);
  expect(errors('mutation { queueVideo(p: "a") { id } ...K } fragment K on Mutation { createApiKey }')).toEqual([ONE_MUTATION_FIELD]);
  expect(
    errors('mutation { ...A ...B } fragment A on Mutation { queueVideo(p: "a") { id } } fragment B on Mutation { ... on Mutation { k: createApiKey } }'),
  ).toEqual([ONE_MUTATION_FIELD]);
  // An alias cannot pass a field off as __typename.
  expect(errors('mutation { __typename: createApiKey queueVideo(p: "a") { id } }')).toContain(ONE_MUTATION_FIELD);
  // Conditional fields are still counted: what the document could run is what is checked.
  expect(errors('mutation($x: Boolean!) { a: createApiKey @include(if: $x) b: createApiKey @skip(if: $x) }')).toEqual([ONE_MUTATION_FIELD]);
});

test('each mutation operation of a document is checked, a fragment cycle is walked once', () => {
  expect(errors('mutation A { createApiKey } mutation B { createApiKey k: createApiKey }')).toEqual([ONE_MUTATION_FIELD]);
  const cyclic = errors('mutation { ...A } fragment A on Mutation { createApiKey ...B } fragment B on Mutation { ...A }');
  expect(cyclic).toEqual(expect.arrayContaining([expect.stringMatching(/Cannot spread fragment/)]));
  expect(cyclic).not.toContain(ONE_MUTATION_FIELD);
});
