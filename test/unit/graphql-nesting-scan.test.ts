import { parse } from 'graphql';
import { nestsDeeperThan } from '../../src/graphql/nesting-scan';
import { nestingError } from '../../src/graphql/limits';

/** The bracket-nesting scan that runs before any parser sees a document (nesting-scan.ts). */
const list = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;

test('counts braces, brackets and parentheses together, up to the first level past the bound', () => {
  expect(nestsDeeperThan('{ a { b { c } } }', 3)).toBe(false);
  expect(nestsDeeperThan('{ a { b { c { d } } } }', 3)).toBe(true);
  // A list literal inside an argument inside a selection set: { ( [ [ ] ] ) } is 4 levels.
  expect(nestsDeeperThan('{ f(x: [[1]]) }', 4)).toBe(false);
  expect(nestsDeeperThan('{ f(x: [[1]]) }', 3)).toBe(true);
  // ( [ [ for the variable's type is 3; { ( { { for the object literal is 4.
  expect(nestsDeeperThan('query($v: [[Int!]!]) { f(o: {a: {b: 1}}) }', 4)).toBe(false);
  expect(nestsDeeperThan('query($v: [[[[Int!]!]]]) { f }', 4)).toBe(true);
  expect(nestsDeeperThan(`{ f(x: ${list(5000)}) }`, 64)).toBe(true);
  // Siblings do not add up: depth, not count.
  expect(nestsDeeperThan('{ a { b } c { d } e { f } }', 2)).toBe(false);
});

test('brackets inside strings, block strings and comments do not count', () => {
  const deep = '[[[[[[[[[[';
  expect(nestsDeeperThan(`{ f(x: "${deep}") }`, 3)).toBe(false);
  expect(nestsDeeperThan(`{ f(x: "a \\" ${deep}") }`, 3)).toBe(false);
  expect(nestsDeeperThan(`{ f(x: "a \\\\") g(y: [[[[1]]]]) }`, 3)).toBe(true);
  expect(nestsDeeperThan(`{ f(x: """ ${deep} \\""" ${deep} """) }`, 3)).toBe(false);
  expect(nestsDeeperThan(`# ${deep}\n{ f }`, 3)).toBe(false);
  expect(nestsDeeperThan(`{ f } # ${deep}\r{ g }`, 3)).toBe(false);
  // A comment ends at its line: what follows counts again.
  expect(nestsDeeperThan(`# x\n${'{'.repeat(5)}`, 3)).toBe(true);
  // An unterminated string ends at its line (the parser reports it); the rest is still scanned.
  expect(nestsDeeperThan(`{ f(x: "open\n${list(10)}) }`, 3)).toBe(true);
});

test('the limit is past what any real document nests, and refuses before parsing', () => {
  const dashboard = `query($first: Int) { videoJobs(first: $first) { edges { node { id status } } pageInfo { endCursor } } }`;
  expect(nestingError(dashboard)).toBeNull();
  expect(nestingError(`{ videoJob(id: ${list(60)}) { id } }`)).toBeNull();
  expect(() => parse(`{ videoJob(id: ${list(60)}) { id } }`)).not.toThrow();
  const refused = nestingError(`{ videoJob(id: ${list(5000)}) { id } }`);
  expect(refused?.message).toBe('The document nests brackets more than 64 levels deep.');
  expect(refused?.extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
});
