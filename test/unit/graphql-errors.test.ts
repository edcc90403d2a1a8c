import { GraphQLError, parse } from 'graphql';
import { DomainError, invalidField, invalidRequest } from '../../src/domain/errors/domain-error';
import { asWritten, FIELD, words } from '../../src/domain/errors/field-path';
import { createFormatError, parseFailure } from '../../src/graphql/errors';
import type { Logger } from '../../src/infra/observability/logger';

const logged: unknown[] = [];
const logger = { error: (o: unknown) => logged.push(o), warn: () => undefined } as unknown as Logger;
const format = createFormatError(logger);
const located = (original: Error) => new GraphQLError(original.message, { originalError: original, path: ['queueVideo'] });

test('a DomainError becomes its REST type, with param, reason and retryAfter', () => {
  const err = located(invalidRequest(words`Invalid '${FIELD}'`, ['resolution']));
  expect(format(err.toJSON(), err)).toEqual({
    message: "Invalid 'resolution'",
    path: ['queueVideo'],
    extensions: { code: 'invalid_request_error', param: 'resolution' },
  });
  const limited = located(new DomainError('daily_cap_exceeded', 'cap', { retryAfterSeconds: 60 }));
  expect(format(limited.toJSON(), limited).extensions).toEqual({ code: 'daily_cap_exceeded', retryAfter: 60 });
});

test('a refused field is named as GraphQL inputs spell it (camelCase), in param and in the message', () => {
  const err = located(invalidField(['reference_image_urls', 1], 'the address is private.'));
  expect(format(err.toJSON(), err)).toMatchObject({
    message: "Invalid 'referenceImageUrls[1]': the address is private.",
    extensions: { code: 'invalid_request_error', param: 'referenceImageUrls[1]' },
  });
  const bare = located(invalidRequest(words`${FIELD} must not point to a loopback address (127.0.0.1).`, ['image_url']));
  expect(format(bare.toJSON(), bare).message).toBe('imageUrl must not point to a loopback address (127.0.0.1).');
  const header = located(invalidField([asWritten('Idempotency-Key')], 'must be 1 to 255 printable ASCII characters.'));
  expect(format(header.toJSON(), header).extensions).toEqual({ code: 'invalid_request_error', param: 'Idempotency-Key' });
});

test('anything else is an internal_error with a fixed message, and is logged', () => {
  const err = located(new Error('connection to 10.0.0.7:5432 refused at Pool.connect (/srv/app/db.js:12)'));
  const out = format({ ...err.toJSON(), extensions: { code: 'INTERNAL_SERVER_ERROR', stacktrace: ['at x'] } }, err);
  expect(out).toEqual({ message: 'The server had an error while processing the request.', path: ['queueVideo'], extensions: { code: 'internal_error' } });
  expect(JSON.stringify(out)).not.toMatch(/10\.0\.0\.7|db\.js/);
  expect(logged).toHaveLength(1);
});

test("GraphQL's own client errors keep their message and code", () => {
  const err = new GraphQLError('Cannot query field "nope" on type "Query".', { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  expect(format(err.toJSON(), err)).toEqual({ message: 'Cannot query field "nope" on type "Query".', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
});

test('a parse failure that is not a syntax error is answered with a fixed message, never its own', () => {
  const overflow = parseFailure(new RangeError('Maximum call stack size exceeded'));
  expect(format(overflow.toJSON(), overflow)).toEqual({ message: 'The document could not be parsed.', extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
  // Apollo wraps it twice (SyntaxError around a GraphQLError around the RangeError).
  const inner = new GraphQLError('Maximum call stack size exceeded', { originalError: new RangeError('Maximum call stack size exceeded') });
  const apollo = new GraphQLError(inner.message, { originalError: inner, extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
  expect(format(apollo.toJSON(), apollo).message).toBe('The document could not be parsed.');
  // The client's own syntax error keeps its text.
  let syntax: unknown;
  try {
    parse('{ a');
  } catch (err) {
    syntax = parseFailure(err);
  }
  const formatted = format((syntax as GraphQLError).toJSON(), syntax);
  expect(formatted.message).toMatch(/^Syntax Error: Expected Name/);
  expect(formatted.extensions).toEqual({ code: 'GRAPHQL_PARSE_FAILED' });
});

test("Apollo's HTTP refusals are answered in our words, the code kept", () => {
  const apollo = (message: string) => {
    const err = new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } });
    return format(err.toJSON(), err);
  };
  for (const message of [
    'Apollo Server supports only GET/POST requests.',
    'Operation batching disabled.',
    'POST body missing, invalid Content-Type, or JSON object has no keys.',
    "This operation has been blocked as a potential Cross-Site Request Forgery (CSRF). Please either specify a 'content-type' header (with a type that is not one of text/plain) or provide a non-empty value for one of the following headers: authorization, x-apollo-operation-name\n",
    'GraphQL operations must contain a non-empty `query` or a `persistedQuery` extension.',
  ]) {
    const out = apollo(message);
    expect(out.extensions).toEqual({ code: 'BAD_REQUEST' });
    expect(out.message).not.toMatch(/apollo|persisted/i);
    expect(out.message).not.toBe(message);
  }
  expect(apollo('The document has several operations: name the one to run in operationName.').message).toBe(
    'The document has several operations: name the one to run in operationName.',
  );
});
