/**
 * GraphQL arguments and variables carrying text the database cannot store (NUL, unpaired
 * surrogates) are refused before execution, as REST refuses them: an invalid_request_error
 * naming the argument or variable. One check for HTTP and WebSocket.
 */
import { GraphQLError, Kind, visit, type DocumentNode } from 'graphql';
import { DomainError } from '../domain/errors/domain-error';
import { assertStorableText, hasUnstorableText } from '../domain/shared/validate';
import { asGraphQLError } from './errors';

export function unstorableArgumentError(document: DocumentNode, variables: Record<string, unknown> | null | undefined): GraphQLError | null {
  try {
    assertStorableText(variables ?? {});
  } catch (err) {
    if (err instanceof DomainError) return asGraphQLError(err, 400);
    throw err;
  }
  let found: string | null = null;
  visit(document, {
    Argument(node) {
      if (found) return;
      visit(node.value, {
        [Kind.STRING](value) {
          if (!found && hasUnstorableText(value.value)) found = node.name.value;
        },
      });
    },
  });
  if (!found) return null;
  return asGraphQLError(
    new DomainError('invalid_request_error', `Invalid '${found}': text must not contain NUL characters or unpaired UTF-16 surrogates.`, { param: found }),
    400,
  );
}
