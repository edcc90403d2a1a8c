/**
 * The domain names a refused key by REST's path parameter (`id`); a GraphQL operation that takes
 * the key as `keyId` answers with that name, so a client can tell which of its arguments it was.
 */
import { DomainError } from '../domain/errors/domain-error';
import { asWritten } from '../domain/errors/field-path';

export async function namingArgument<T>(work: Promise<T>, restName: string, argument: string): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (!(err instanceof DomainError) || err.param !== restName) throw err;
    throw new DomainError(err.type, err.wording, {
      code: err.code,
      fieldPath: [asWritten(argument)],
      retryAfterSeconds: err.retryAfterSeconds,
      headers: err.headers,
      cause: err.cause,
    });
  }
}
