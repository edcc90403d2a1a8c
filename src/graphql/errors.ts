import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { DomainError } from '../domain/errors/domain-error';
import type { Logger } from '../infra/observability/logger';

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
 * The one GraphQL error mapping, for HTTP (Apollo's formatError) and WebSocket alike. A
 * DomainError keeps its message; `extensions.code` is its REST `type`, with `param`, the REST
 * `code` as `reason`, and `retryAfter` seconds where they apply. GraphQL's own client errors keep
 * theirs. Everything else becomes `internal_error` with a fixed message: no stack, no internals.
 */
/** graphql-js names the fields, types and values a mistaken document may have meant: schema hints. */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

/**
 * The one mapping of errors to the wire, for HTTP and WebSocket alike. In production, client
 * errors lose graphql-js's "Did you mean …?" suggestions, which would reveal the schema that
 * introspection hides.
 */
export function createFormatError(logger: Logger, production = false) {
  const hint = (message: string) => (production ? message.replace(SUGGESTION, '') : message);
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const where = { ...(formatted.locations ? { locations: formatted.locations } : {}), ...(formatted.path ? { path: formatted.path } : {}) };
    const domain = domainErrorOf(error);
    if (domain) {
      if (domain.status >= 500) logger.warn({ type: domain.type, cause: String(domain.cause ?? '') }, domain.message);
      const extensions: Record<string, unknown> = { code: domain.type };
      if (domain.param !== null) extensions.param = domain.param;
      if (domain.code !== null) extensions.reason = domain.code;
      if (domain.retryAfterSeconds !== undefined) extensions.retryAfter = domain.retryAfterSeconds;
      return { message: domain.message, ...where, extensions };
    }
    const code = formatted.extensions?.code;
    if (typeof code === 'string' && CLIENT_CODES.has(code)) return { message: hint(formatted.message), ...where, extensions: { code } };
    logger.error({ err: error }, 'unhandled error in a GraphQL operation');
    return { message: 'The server had an error while processing the request.', ...where, extensions: { code: 'internal_error' } };
  };
}

export type FormatError = ReturnType<typeof createFormatError>;
