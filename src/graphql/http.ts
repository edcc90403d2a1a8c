import express, { type ErrorRequestHandler, type Express, type Request, type RequestHandler, type Response } from 'express';
import { GraphQLError, OperationTypeNode, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { expressMiddleware } from '@as-integrations/express5';
import { DomainError, unauthenticated } from '../domain/errors/domain-error';
import type { Logger } from '../infra/observability/logger';
import { authorizationHeader, bearerToken } from '../infra/http/bearer-token';
import { asGraphQLError, type FormatError } from './errors';
import { authenticateBearer, missingCredential, type GraphQLContext, type GraphQLServices } from './context';
import { LIMITS, PARSE_OPTIONS, costError, documentLimitError, nestingError } from './limits';
import { OneMutationFieldRule, workingRootFields } from './root-fields';
import { unstorableArgumentError } from './storable-arguments';

/**
 * Before execution: a subscription is refused (HTTP cannot carry it; graphql-js would run its
 * resolver without an event); an operation without a credential is refused with 401, as a bad
 * credential is (only reading the schema needs none: introspection outside production); and so
 * is an operation whose cost, known once the variables are, passes the bound.
 */
function operationLimitsPlugin(schema: GraphQLSchema): ApolloServerPlugin<GraphQLContext> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ document, operation, request, contextValue }) {
          if (operation?.operation === OperationTypeNode.SUBSCRIPTION) {
            throw new GraphQLError('Subscriptions are served over WebSocket (graphql-transport-ws) at /graphql.', {
              extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
            });
          }
          if (!contextValue.principal && operation && workingRootFields(operation, document).length > 0) {
            throw asGraphQLError(missingCredential(), 401);
          }
          const error = unstorableArgumentError(document, request.variables) ?? costError(schema, document, request.variables, request.operationName);
          if (error) throw error;
        },
      };
    },
  };
}

/**
 * The bracket nesting before anything parses the text (the parser recurses per level), then
 * the shape bounds (depth, aliases, fields) before Apollo validates: Apollo has no hook between
 * parsing and validation that may answer the request (an exception there is a 500), and as a
 * validation rule they would only report, leaving graphql-js's quadratic overlapping-fields check
 * to run on the document anyway. Parsing twice is cheap next to that: it stops at maxTokens.
 * A document that does not parse is left to Apollo, which answers GRAPHQL_PARSE_FAILED.
 */
function shapeGuard(formatError: FormatError): RequestHandler {
  return (req, res, next) => {
    const source = req.method === 'GET' ? req.query.query : (req.body as { query?: unknown } | undefined)?.query;
    if (typeof source !== 'string') return next();
    const refuse = (error: GraphQLError) => sendErrors(req, res, 400, { errors: [formatError(error.toJSON(), error)] });
    const tooDeep = nestingError(source);
    if (tooDeep) return refuse(tooDeep);
    let document: DocumentNode;
    try {
      document = parse(source, PARSE_OPTIONS);
    } catch {
      return next();
    }
    const error = documentLimitError(document);
    if (!error) return next();
    refuse(error);
  };
}

/**
 * Errors raised before Apollo on /graphql (the body parser's, and the app-wide query-string
 * check's: a `query` given twice) answer in the GraphQL error shape, not REST's.
 */
const requestErrors =
  (formatError: FormatError): ErrorRequestHandler =>
  (err, req, res, next) => {
    const type = (err as { type?: string }).type;
    if (err instanceof DomainError) {
      const error = asGraphQLError(err);
      sendErrors(req, res, err.status, { errors: [formatError(error.toJSON(), error)] });
    } else if (type === 'entity.too.large') {
      sendErrors(req, res, 413, {
        errors: [{ message: `The request body is larger than ${LIMITS.maxBodyBytes} bytes.`, extensions: { code: 'request_too_large' } }],
      });
    } else if (type === 'entity.parse.failed') {
      sendErrors(req, res, 400, { errors: [{ message: 'The request body is not valid JSON.', extensions: { code: 'BAD_REQUEST' } }] });
    } else next(err);
  };

const GRAPHQL_RESPONSE_JSON = 'application/graphql-response+json';

/**
 * Errors answered before Apollo, in the media type Apollo would answer with: the GraphQL-over-HTTP
 * one when the client asks for it. Answered as plain JSON with a 4xx, Apollo Client 4 (which
 * follows that spec) read them as "Response not successful" and lost their code and message.
 */
function sendErrors(req: Request, res: Response, status: number, body: unknown): void {
  const accept = req.get('accept') ?? '';
  const type =
    accept.includes(GRAPHQL_RESPONSE_JSON) && req.accepts([GRAPHQL_RESPONSE_JSON, 'application/json']) === GRAPHQL_RESPONSE_JSON
      ? GRAPHQL_RESPONSE_JSON
      : 'application/json';
  res.status(status).type(`${type}; charset=utf-8`).send(JSON.stringify(body));
}

/**
 * POST /graphql (and GET for queries) through Apollo Server. No batching (a JSON array is refused before any work),
 * no persisted queries; introspection and the landing page only outside production.
 */
export async function createHttpDoor(deps: {
  schema: GraphQLSchema;
  services: GraphQLServices;
  formatError: FormatError;
  logger: Logger;
  production: boolean;
}): Promise<{ mount: (app: Express) => void; stop: () => Promise<void> }> {
  const apollo = new ApolloServer<GraphQLContext>({
    schema: deps.schema,
    // Apollo's own warnings go to the service log, as structured lines like every other.
    logger: deps.logger,
    formatError: deps.formatError,
    parseOptions: PARSE_OPTIONS,
    allowBatchedHttpRequests: false,
    persistedQueries: false,
    // A GET query (urql's default) is safe when it carries Authorization: no browser sends that
    // header cross-site without a preflight, and no credential here rides on cookies. Mutations
    // stay POST-only (Apollo answers 405 to a mutation over GET).
    csrfPrevention: { requestHeaders: ['authorization', 'x-apollo-operation-name', 'apollo-require-preflight'] },
    introspection: !deps.production,
    hideSchemaDetailsFromClientErrors: deps.production,
    includeStacktraceInErrorResponses: false,
    stopOnTerminationSignals: false,
    // One root field per mutation (root-fields.ts), checked with graphql-js's own rules.
    validationRules: [OneMutationFieldRule],
    plugins: [operationLimitsPlugin(deps.schema), ...(deps.production ? [ApolloServerPluginLandingPageDisabled()] : [])],
  });
  await apollo.start();

  // A bad credential answers 401 at once; none at all is refused once the operation is known
  // (operationLimitsPlugin), so that reading the schema needs none.
  const context = async ({ req }: { req: express.Request }): Promise<GraphQLContext> => {
    try {
      // Two headers are refused, as on REST: Node keeps the first, a proxy in front may keep the last.
      const header = authorizationHeader(req);
      if (!header) return { principal: null, services: deps.services };
      const token = bearerToken(header);
      if (!token) throw unauthenticated('Malformed Authorization header; expected "Bearer <API key or ID token>".');
      return { principal: await authenticateBearer(token, deps.services), services: deps.services };
    } catch (err) {
      if (err instanceof DomainError) throw asGraphQLError(err, err.status);
      throw err instanceof GraphQLError ? err : new GraphQLError('Context creation failed', { originalError: err as Error });
    }
  };

  return {
    mount: (app) => {
      // A CORS preflight: this API serves no other origin's pages, so it allows none; said with a
      // 204 and the methods it takes, not the cross-site-request refusal Apollo gave it.
      app.options('/graphql', (_req, res) => void res.status(204).set('Allow', 'GET, POST').end());
      app.use(
        '/graphql',
        express.json({ limit: LIMITS.maxBodyBytes }),
        requestErrors(deps.formatError),
        shapeGuard(deps.formatError),
        expressMiddleware(apollo, { context }),
      );
    },
    stop: () => apollo.stop(),
  };
}
