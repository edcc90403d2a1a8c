import { getIntrospectionQuery, parse } from 'graphql';
import { LIMITS, documentLimitError, measureDocument } from '../../src/graphql/limits';

const rep = (n: number, s: string) => Array.from({ length: n }, () => s).join(' ');

test("a client's introspection query (GraphQL Sandbox, codegen) is within every bound", () => {
  const doc = parse(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true }), { maxTokens: LIMITS.maxTokens });
  expect(documentLimitError(doc)).toBeNull();
});

test('depth follows fragments, once per fragment however often it is spread', () => {
  const chain = Array.from({ length: 30 }, (_, i) => `fragment F${i} on T { a { ${rep(20, `...F${i + 1}`)} } }`).join('\n');
  const doc = parse(`{ root { ...F0 } }\n${chain}\nfragment F30 on T { leaf }`);
  expect(measureDocument(doc).depth).toBe(32);
});

test('a fragment cycle neither hangs nor counts', () => {
  const doc = parse('{ a { ...X } } fragment X on T { b { ...Y } } fragment Y on T { c { ...X } }');
  expect(measureDocument(doc).depth).toBe(3);
});

test('introspection fields do not count towards depth; aliases and fields are counted as written', () => {
  const doc = parse(
    `{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } x: models { y: id } }`,
  );
  expect(measureDocument(doc)).toEqual({ depth: 2, aliases: 2, fields: 14 });
});
