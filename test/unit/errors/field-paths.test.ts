/**
 * A refusal names its field by a path; each door writes it in its own spelling, in `param` and in
 * the message: REST as the domain spells it (snake_case), GraphQL in camelCase, a name that is
 * not a field (a header, `variables`) as it is in both.
 */
import { GraphQLError } from 'graphql';
import { DomainError, invalidField, invalidRequest, notFound } from '../../../src/domain/errors/domain-error';
import { asWritten, FIELD, pathOf, words } from '../../../src/domain/errors/field-path';
import { fromStored, storedError } from '../../../src/domain/idempotency/stored-error';
import { createFormatError } from '../../../src/graphql/errors';
import { errorBody } from '../../../src/infra/http/error-body';
import type { Logger } from '../../../src/infra/observability/logger';

const format = createFormatError({ error: () => undefined, warn: () => undefined } as unknown as Logger);

/** What each door answers for one refusal: REST's body, GraphQL's formatted error. */
function doors(err: DomainError) {
  const located = new GraphQLError(err.message, { originalError: err, path: ['queueVideo'] });
  const graphql = format(located.toJSON(), located);
  const { message, param } = errorBody(err).error;
  return { rest: { message, param }, graphql: { message: graphql.message, param: graphql.extensions?.param, path: graphql.path } };
}

test('a nested path with indexes: each key respelled by GraphQL, the indexes and the shape kept', () => {
  expect(doors(invalidField(['messages', 0, 'content', 2, 'image_url'], 'must be a URL'))).toEqual({
    rest: { message: "Invalid 'messages[0].content[2].image_url': must be a URL", param: 'messages[0].content[2].image_url' },
    graphql: { message: "Invalid 'messages[0].content[2].imageUrl': must be a URL", param: 'messages[0].content[2].imageUrl', path: ['queueVideo'] },
  });
  expect(doors(invalidField(['input', 'reference_image_urls', 1], 'the address is private.'))).toMatchObject({
    rest: { message: "Invalid 'input.reference_image_urls[1]': the address is private.", param: 'input.reference_image_urls[1]' },
    graphql: { message: "Invalid 'input.referenceImageUrls[1]': the address is private.", param: 'input.referenceImageUrls[1]' },
  });
});

test('a message naming its field twice, unquoted at its start, names it alike both times', () => {
  const err = invalidRequest(words`${FIELD} is refused: send '${FIELD}' as one of 16:9, 9:16, 1:1.`, ['aspect_ratio']);
  expect(doors(err)).toMatchObject({
    rest: { message: "aspect_ratio is refused: send 'aspect_ratio' as one of 16:9, 9:16, 1:1.", param: 'aspect_ratio' },
    graphql: { message: "aspectRatio is refused: send 'aspectRatio' as one of 16:9, 9:16, 1:1.", param: 'aspectRatio' },
  });
});

test("only the field is respelled: other words (another field's name, the client's own text) are the same in both doors", () => {
  const err = invalidField(['resolution'], `svc-motion does not take it; it is priced by 'duration_seconds' alone (sent: 'image_url').`);
  const { rest, graphql } = doors(err);
  expect(graphql.message).toBe(rest.message);
  expect(graphql.message).toBe("Invalid 'resolution': svc-motion does not take it; it is priced by 'duration_seconds' alone (sent: 'image_url').");
  // The client's text that happens to read like the field is not the field.
  const named = invalidField(['tool_choice'], "no tool named 'tool_choice' in 'tools'.");
  expect(doors(named).graphql.message).toBe("Invalid 'toolChoice': no tool named 'tool_choice' in 'tools'.");
});

test('a name that is not a field comes out as it is in both doors', () => {
  for (const name of ['Idempotency-Key', 'Expect', 'variables', 'Sec-WebSocket-Key', 'models.3.routes.0.api_key_env']) {
    const err = invalidField([asWritten(name)], 'is refused.');
    expect(doors(err)).toMatchObject({
      rest: { message: `Invalid '${name}': is refused.`, param: name },
      graphql: { message: `Invalid '${name}': is refused.`, param: name },
    });
  }
  // A GraphQL argument named for the key it carried keeps its own spelling after a respelled one.
  const keyId = notFound(words`No API key with that id ('${FIELD}').`, 'key_not_found', [asWritten('keyId')]);
  expect(doors(keyId).graphql).toMatchObject({ message: "No API key with that id ('keyId').", param: 'keyId' });
});

test('a refusal without a field has no param in either door, and its message as it is', () => {
  const err = invalidRequest('The request body must be a JSON object.');
  expect(doors(err)).toEqual({
    rest: { message: 'The request body must be a JSON object.', param: null },
    graphql: { message: 'The request body must be a JSON object.', param: undefined, path: ['queueVideo'] },
  });
});

test('a refusal kept as JSON (an idempotent call) and thrown again is named as the first answer was, in both doors', () => {
  const first = invalidField(['reference_image_urls', 2], 'must not point to a private address (10.0.0.1).', 'bad_url');
  const again = fromStored(JSON.parse(JSON.stringify(storedError(first))));
  expect(doors(again)).toEqual(doors(first));
  expect([again.type, again.code, again.status]).toEqual(['invalid_request_error', 'bad_url', 400]);
  const header = new DomainError('idempotency_error', 'This Idempotency-Key was already used.', { fieldPath: [asWritten('Idempotency-Key')] });
  expect(doors(fromStored(JSON.parse(JSON.stringify(storedError(header)))))).toEqual(doors(header));
  // A row that keeps only REST's text: the param it wrote names the field wherever the message writes it.
  const textOnly = fromStored({ type: 'invalid_request_error', message: "Invalid 'image_url': image_url must be https.", param: 'image_url' });
  expect(doors(textOnly).graphql).toMatchObject({ message: "Invalid 'imageUrl': imageUrl must be https.", param: 'imageUrl' });
});

test("a path written out by someone else (an upstream's param) reads back into its segments, or stays one name as written", () => {
  expect(pathOf('messages[0].content[12].image_url')).toEqual(['messages', 0, 'content', 12, 'image_url']);
  expect(pathOf('messages.0.content')).toEqual(['messages', '0', 'content']);
  for (const odd of ['a..b', '.a', 'a[x]', 'a[01]', 'a[', '[0]x']) expect(pathOf(odd)).toEqual([asWritten(odd)]);
});
