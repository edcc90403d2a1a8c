import { GraphQLError } from 'graphql';
import { DomainError, invalidRequest } from '../../src/domain/errors/domain-error';
import { createFormatError } from '../../src/graphql/errors';
import type { Logger } from '../../src/infra/observability/logger';

const logged: unknown[] = [];
const logger = { error: (o: unknown) => logged.push(o), warn: () => undefined } as unknown as Logger;
const format = createFormatError(logger);
const located = (original: Error) => new GraphQLError(original.message, { originalError: original, path: ['queueVideo'] });

test('a DomainError becomes its REST type, with param, reason and retryAfter', () => {
  const err = located(invalidRequest("Invalid 'resolution'", 'resolution'));
  expect(format(err.toJSON(), err)).toEqual({ message: "Invalid 'resolution'", path: ['queueVideo'], extensions: { code: 'invalid_request_error', param: 'resolution' } });
  const limited = located(new DomainError('daily_cap_exceeded', 'cap', { retryAfterSeconds: 60 }));
  expect(format(limited.toJSON(), limited).extensions).toEqual({ code: 'daily_cap_exceeded', retryAfter: 60 });
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
