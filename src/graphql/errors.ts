import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { DomainError, causeText } from '../domain/errors/domain-error';
import type { Spelling } from '../domain/errors/field-path';
import type { Logger } from '../infra/observability/logger';
import { requestRefusalMessage } from './request-errors';

/** Apollo's codes for a request the client got wrong: their messages are meant for the client. */
const CLIENT_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'BAD_REQUEST',
  'OPERATION_RESOLUTION_FAILURE',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_SUPPORTED',
]);

/** The DomainError behind a (possibly located, possibly wrapped) GraphQL error. */
function domainErrorOf(error: unknown): DomainError | null {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e; depth++) {
    if (e instanceof DomainError) return e;
    e = e instanceof GraphQLError ? e.originalError : undefined;
  }
  return null;
}

/** A DomainError as a GraphQLError, for hooks that must hand graphql-ws or Apollo a GraphQLError. */
export function asGraphQLError(err: DomainError, httpStatus?: number): GraphQLError {
  return new GraphQLError(err.message, { originalError: err, extensions: httpStatus ? { http: { status: httpStatus } } : {} });
}

/**
 * A document the parser gave up on. graphql-js reports what the client wrote as a GraphQLError
 * ("Syntax Error: …"); anything else it throws (a RangeError when the stack runs out) is ours,
 * and formatError answers it with a fixed message (`internalCause`).
 */
export function parseFailure(err: unknown): GraphQLError {
  const cause = err instanceof Error ? err : new Error(String(err));
  return new GraphQLError(cause.message, { originalError: cause, extensions: { code: 'GRAPHQL_PARSE_FAILED' } });
}

/** Whether a (wrapped) client error was caused by something other than a GraphQLError: not the client's text to read. */
function internalCause(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e; depth++) {
    if (!(e instanceof GraphQLError)) return true;
    e = e.originalError;
  }
  return false;
}

const UNPARSABLE = 'The document could not be parsed.';

const SNAKE_PART = /_([a-z0-9])/g;

/**
 * GraphQL inputs carry the domain's (REST's) keys in camelCase (CONTRACT: `aspectRatio` for
 * `aspect_ratio`): a refused field is named as the client wrote it, in `extensions.param` and in
 * the message, so a front end can put the message beside its field. A key without `_` is as it is.
 */
export const graphqlSpelling: Spelling = (key) => key.replace(SNAKE_PART, (_all, first: string) => first.toUpperCase());

/** graphql-js names the fields, types and values a mistaken document may have meant: schema hints. */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

/**
 * The one GraphQL error mapping, for HTTP (Apollo's formatError) and WebSocket alike. A
 * DomainError keeps its words, the field they name in GraphQL's camelCase (`graphqlSpelling`);
 * `extensions.code` is its REST `type`, with `param` (spelled alike), the REST `code` as `reason`, and `retryAfter` seconds
 * where they apply. GraphQL's own client errors keep theirs, except Apollo's HTTP refusals,
 * reworded in our own words (request-errors.ts), and a parse failure that was not the client's
 * syntax. Everything else becomes `internal_error` with a fixed message: no stack, no internals.
 * In production, client errors lose graphql-js's "Did you mean …?" suggestions, which would
 * reveal the schema that introspection hides.
 */
export function createFormatError(logger: Logger, production = false) {
  const hint = (message: string) => (production ? message.replace(SUGGESTION, '') : message);
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const where = { ...(formatted.locations ? { locations: formatted.locations } : {}), ...(formatted.path ? { path: formatted.path } : {}) };
    const domain = domainErrorOf(error);
    if (domain) {
      if (domain.status >= 500) logger.warn({ type: domain.type, cause: causeText(domain.cause) }, domain.message);
      const extensions: Record<string, unknown> = { code: domain.type };
      const param = domain.paramFor(graphqlSpelling);
      if (param !== null) extensions.param = param;
      if (domain.code !== null) extensions.reason = domain.code;
      if (domain.retryAfterSeconds !== undefined) extensions.retryAfter = domain.retryAfterSeconds;
      return { message: domain.messageFor(graphqlSpelling), ...where, extensions };
    }
    const code = formatted.extensions?.code;
    if (code === 'GRAPHQL_PARSE_FAILED' && internalCause(error)) {
      logger.warn({ reason: formatted.message }, 'a GraphQL document could not be parsed for a reason of ours');
      return { message: UNPARSABLE, extensions: { code } };
    }
    if (code === 'BAD_REQUEST') return { message: hint(requestRefusalMessage(formatted.message)), ...where, extensions: { code } };
    if (typeof code === 'string' && CLIENT_CODES.has(code)) return { message: hint(formatted.message), ...where, extensions: { code } };
    logger.error({ err: error }, 'unhandled error in a GraphQL operation');
    return { message: 'The server had an error while processing the request.', ...where, extensions: { code: 'internal_error' } };
  };
}

export type FormatError = ReturnType<typeof createFormatError>;
