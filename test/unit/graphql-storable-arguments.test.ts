import { parse } from 'graphql';
import { unstorableArgumentError } from '../../src/graphql/storable-arguments';

/** Where unstorable text is named: the argument path a variable fills, as if written inline. */
const paramFor = (query: string, variables?: Record<string, unknown>) => {
  const error = unstorableArgumentError(parse(query), variables);
  return error && { param: (error.originalError as { param?: string | null }).param, status: error.extensions.http };
};

test('a variable is named by the first argument it fills, in document order, fragments included', () => {
  const query = 'fragment F on Query { y(first: $a) } query($a: String) { x(deep: { list: [1, { s: $a }] }) ...F }';
  expect(paramFor(query, { a: 'n\u0000' })).toEqual({ param: 'first', status: { status: 400 } });
  expect(paramFor('query($a: String) { x(deep: { list: [1, { s: $a }] }) y(first: $a) }', { a: 'n\u0000' })?.param).toBe('deep.list[1].s');
});

test('a directive argument, a default value, a variable passed nowhere', () => {
  expect(paramFor('query($a: String) { x @skip(if: $a) }', { a: '\uDC00' })?.param).toBe('if');
  expect(paramFor('query($a: String = "n\\u0000") { x(input: { name: $a }) }')?.param).toBe('input.name');
  expect(paramFor('query($a: String) { x }', { a: '\u0000', b: 'fine' })?.param).toBe('a');
  expect(paramFor('query($a: String) { x(s: $a) }', { a: 'fine \uD83D\uDE00' })).toBeNull();
});

test('a literal names its path inside the argument', () => {
  expect(paramFor('{ x(input: { urls: ["ok", "n\\u0000"] }) }')?.param).toBe('input.urls[1]');
  expect(paramFor('{ x(input: { urls: ["ok"] }) }')).toBeNull();
});
