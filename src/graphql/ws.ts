import type { Server } from 'node:http';
import { GraphQLError, NoSchemaIntrospectionCustomRule, parse, specifiedRules, validate, type ExecutionArgs, type GraphQLSchema } from 'graphql';
import { WebSocketServer, type WebSocket } from 'ws';
import { useServer } from 'graphql-ws/use/ws';
import { DomainError } from '../domain/errors/domain-error';
import type { Principal } from '../domain/keys/principal';
import type { Logger } from '../infra/observability/logger';
import { bearerToken } from '../infra/http/bearer-token';
import { asGraphQLError, type FormatError } from './errors';
import { authenticateBearer, type GraphQLContext, type GraphQLServices } from './context';
import { LIMITS, PARSE_OPTIONS, costError, documentLimitError } from './limits';
import { unstorableArgumentError } from './storable-arguments';

export const GRAPHQL_PATH = '/graphql';

/** What a connection carries from its connection_init to its operations: the credential, re-checked by each. */
interface ConnectionExtra extends Record<PropertyKey, unknown> {
  token: string;
  /** Set for a socket authenticated by an API key: a change to the key re-checks it. */
  keyId?: string;
}

/** graphql-ws's close code for a refused credential. */
const FORBIDDEN = 4403;

/**
 * The sockets opened with each API key. A change to a key (revoked, narrowed) reaches every
 * instance over the key-change feed; each re-checks that key's sockets and closes those whose
 * credential no longer holds (4403), which ends their subscriptions. After a gap in the feed
 * (changes may have been missed) every key socket is re-checked.
 */
class KeySockets {
  private readonly byKey = new Map<string, Set<{ token: string; socket: WebSocket }>>();

  constructor(
    private readonly services: GraphQLServices,
    private readonly logger: Logger,
  ) {
    services.keyChanges.subscribe((keyId) => void this.recheck(keyId));
    services.keyChanges.onGap(() => {
      if (services.keyChanges.live) for (const keyId of [...this.byKey.keys()]) void this.recheck(keyId);
    });
  }

  add(keyId: string, token: string, socket: WebSocket): void {
    const entry = { token, socket };
    let set = this.byKey.get(keyId);
    if (!set) this.byKey.set(keyId, (set = new Set()));
    set.add(entry);
    socket.once('close', () => {
      set!.delete(entry);
      if (set!.size === 0 && this.byKey.get(keyId) === set) this.byKey.delete(keyId);
    });
  }

  private async recheck(keyId: string): Promise<void> {
    const set = this.byKey.get(keyId);
    if (!set || set.size === 0) return;
    const { token } = set.values().next().value!;
    try {
      await authenticateBearer(token, this.services);
    } catch (err) {
      if (!(err instanceof DomainError)) return this.logger.warn({ err, keyId }, 'key re-check failed; sockets kept');
      for (const { socket } of set) socket.close(FORBIDDEN, 'Forbidden');
    }
  }
}

/**
 * Everything between a `subscribe` message and execution, done here rather than by graphql-ws so
 * the WebSocket door has HTTP's limits: the per-connection cap, the credential checked again
 * (a key revoked or a token expired since connecting stops new operations), token-bounded parsing,
 * the shape bounds before validation, and the cost bound. Never throws: graphql-ws would close
 * the socket.
 */
async function prepare(
  deps: { schema: GraphQLSchema; services: GraphQLServices; production: boolean },
  activeOperations: number,
  token: string,
  payload: { query: unknown; variables?: Record<string, unknown> | null; operationName?: string | null },
): Promise<ExecutionArgs | GraphQLError[]> {
  if (activeOperations > LIMITS.maxSubscriptionsPerConnection) {
    const msg = `At most ${LIMITS.maxSubscriptionsPerConnection} operations may run at once on one connection.`;
    return [asGraphQLError(new DomainError('rate_limit_exceeded', msg))];
  }
  let principal: Principal;
  try {
    principal = await authenticateBearer(token, deps.services);
  } catch (err) {
    return [err instanceof DomainError ? asGraphQLError(err) : new GraphQLError('Authentication failed', { originalError: err as Error })];
  }
  if (typeof payload.query !== 'string') return [new GraphQLError('The operation has no query.', { extensions: { code: 'BAD_REQUEST' } })];
  let document;
  try {
    document = parse(payload.query, PARSE_OPTIONS);
  } catch (err) {
    return [new GraphQLError((err as Error).message, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })];
  }
  const outOfBounds = documentLimitError(document) ?? unstorableArgumentError(document, payload.variables);
  if (outOfBounds) return [outOfBounds];
  const rules = deps.production ? [...specifiedRules, NoSchemaIntrospectionCustomRule] : specifiedRules;
  const invalid = validate(deps.schema, document, rules);
  if (invalid.length > 0) return invalid.map((e) => new GraphQLError(e.message, { nodes: e.nodes, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }));
  const tooCostly = costError(deps.schema, document, payload.variables ?? undefined, payload.operationName);
  if (tooCostly) return [tooCostly];
  const contextValue: GraphQLContext = { principal, services: deps.services };
  return { schema: deps.schema, document, variableValues: payload.variables, operationName: payload.operationName, contextValue };
}

/**
 * graphql-transport-ws on the HTTP server's port, path /graphql. The credential is checked at
 * connection time (`connectionParams.authorization`); a missing or bad one closes the socket
 * (4403) before any operation runs.
 */
export function attachWebSocketDoor(
  server: Server,
  deps: { schema: GraphQLSchema; services: GraphQLServices; formatError: FormatError; logger: Logger; production: boolean },
): { close: () => Promise<void> } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.maxBodyBytes });
  let closing = false;

  const onUpgrade = (req: import('node:http').IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== GRAPHQL_PATH) {
      // Another door may own this path; when none does, do not leave the socket hanging.
      if (server.listenerCount('upgrade') === 1) socket.destroy();
      return;
    }
    if (closing) return void socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  };
  server.on('upgrade', onUpgrade);

  const format = (errors: readonly GraphQLError[]) => errors.map((e) => deps.formatError(e.toJSON(), e));
  const keySockets = new KeySockets(deps.services, deps.logger);
  const disposable = useServer<Record<string, unknown>, ConnectionExtra>(
    {
      isProd: deps.production,
      onConnect: async (ctx) => {
        const raw = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        const token = typeof raw === 'string' ? bearerToken(raw) : null;
        if (!token) return false;
        try {
          const principal = await authenticateBearer(token, deps.services);
          ctx.extra.token = token;
          if (principal.kind === 'key') {
            ctx.extra.keyId = principal.keyId;
            keySockets.add(principal.keyId, token, ctx.extra.socket);
          }
          return true;
        } catch (err) {
          // A bad credential is 4403; our own failure (the database, say) is 4500, logged here.
          if (!(err instanceof DomainError)) {
            deps.logger.error({ err }, 'WebSocket connection check failed');
            ctx.extra.socket.close(4500, 'Internal server error');
          }
          return false;
        }
      },
      onSubscribe: async (ctx, _id, payload) =>
        prepare(deps, Object.keys(ctx.subscriptions).length, ctx.extra.token ?? '', payload),
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? { ...result, errors: format(result.errors) } : undefined),
      onError: (_ctx, _id, _payload, errors) => format(errors),
    },
    wss,
  );

  return {
    close: async () => {
      closing = true;
      server.off('upgrade', onUpgrade);
      // Clients get 1001 "Going away"; one that does not answer the close handshake is cut off.
      const cutOff = setTimeout(() => wss.clients.forEach((c) => c.terminate()), 2000);
      await disposable.dispose();
      clearTimeout(cutOff);
    },
  };
}
