import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { GraphQLError, getOperationAST, type ExecutionArgs, type ExecutionResult, type FormattedExecutionResult, type GraphQLSchema } from 'graphql';
import { CloseCode } from 'graphql-ws';
import { WebSocketServer, type WebSocket } from 'ws';
import { DomainError } from '../domain/errors/domain-error';
import type { Logger } from '../infra/observability/logger';
import type { Metrics } from '../infra/observability/metrics';
import { bearerToken } from '../infra/http/bearer-token';
import { clientAddress, trustedProxies } from '../infra/http/client-address';
import { asGraphQLError, type FormatError } from './errors';
import { authenticateBearer, type CallerPrincipal, type GraphQLContext, type GraphQLServices } from './context';
import { LIMITS, costError } from './limits';
import { documentChecker, type CheckedDocument } from './document-checks';
import { deliverTo, sharedSubscribe } from './shared-execution';
import { TurnGate } from './turn-gate';
import { unstorableArgumentError } from './storable-arguments';
import { ConnectionCap } from './connection-cap';
import { messagesThroughGate } from './message-turns';
import { BurstReads } from './burst-reads';
import { serveGraphQLWs } from './ws-transport';
import { claimUpgrades, isWebSocketUpgradeTo, serveAsHttp } from './upgrade-routing';
import { handshakeFailed, handshakeRefusal, refuseUpgrade } from './upgrade-refusals';
import { closeRefused, FORBIDDEN } from './connection-refusal';
import { closeWhenTokenExpires, KeySockets } from './credential-sockets';
import type { Clock } from '../domain/ports/clock';
import { systemClock } from '../domain/shared/system-clock';

export const GRAPHQL_PATH = '/graphql';

/** What a connection carries from its connection_init to its operations: the credential, re-checked by each. */
interface ConnectionExtra extends Record<PropertyKey, unknown> {
  token: string;
  /** Set for a socket authenticated by an API key: a change to the key re-checks it. */
  keyId?: string;
  /** Ids of the operations admitted on this connection (see `admit`); refused ones are never here. */
  admitted?: Set<string>;
}

/**
 * Everything between a `subscribe` message and execution, done here rather than by graphql-ws so
 * the WebSocket door has HTTP's limits (the per-connection cap is `admit`'s): the credential checked again
 * (a key revoked or a token expired since connecting stops new operations), token-bounded parsing,
 * the shape bounds before validation (both remembered per document text), and the cost bound.
 * Never throws: graphql-ws would close the socket.
 */
async function prepare(
  deps: { schema: GraphQLSchema; services: GraphQLServices; checkDocument: (text: string) => CheckedDocument },
  token: string,
  payload: { query: unknown; variables?: Record<string, unknown> | null; operationName?: string | null },
): Promise<ExecutionArgs | GraphQLError[]> {
  let principal: CallerPrincipal;
  try {
    principal = await authenticateBearer(token, deps.services);
  } catch (err) {
    return [err instanceof DomainError ? asGraphQLError(err) : new GraphQLError('Authentication failed', { originalError: err as Error })];
  }
  if (typeof payload.query !== 'string') return [new GraphQLError('The operation has no query.', { extensions: { code: 'BAD_REQUEST' } })];
  const checked = deps.checkDocument(payload.query);
  if (!checked.ok) return [...checked.errors];
  const { document } = checked;
  const outOfBounds = checked.limitError ?? unstorableArgumentError(document, payload.variables);
  if (outOfBounds) return [outOfBounds];
  if (checked.invalid.length > 0) return [...checked.invalid];
  // Several operations and none named (or a name none has): graphql-ws would fail it as its own error (internal_error).
  if (!getOperationAST(document, payload.operationName ?? undefined)) return [unidentifiedOperation(payload.operationName)];
  const tooCostly = costError(deps.schema, document, payload.variables ?? undefined, payload.operationName);
  if (tooCostly) return [tooCostly];
  const contextValue: GraphQLContext = { principal, services: deps.services };
  return { schema: deps.schema, document, variableValues: payload.variables, operationName: payload.operationName, contextValue };
}

function unidentifiedOperation(name: string | null | undefined): GraphQLError {
  const message = name ? `The document has no operation named '${name}'.` : 'The document has several operations: name the one to run in operationName.';
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST' } });
}

/**
 * The per-connection cap, decided in arrival order: called synchronously when graphql-ws hands
 * over a `subscribe` message (before any await), so operations that arrive together are counted
 * one after another, not all at once after the turn gate. An admitted operation holds its place
 * while graphql-ws keeps its id in `ctx.subscriptions`: it deletes the id when the operation
 * ends (completed, failed, refused by `prepare`, or completed by the client), which frees the
 * place. A refused operation never holds one.
 */
function admit(ctx: { subscriptions: Record<string, unknown>; extra: Pick<Partial<ConnectionExtra>, 'admitted'> }, id: string): GraphQLError | null {
  const admitted = (ctx.extra.admitted ??= new Set());
  // The id is in ctx.subscriptions again now, so an entry left by an ended operation of the same id must go first.
  admitted.delete(id);
  for (const other of admitted) if (!(other in ctx.subscriptions)) admitted.delete(other);
  if (admitted.size >= LIMITS.maxSubscriptionsPerConnection) {
    const msg = `At most ${LIMITS.maxSubscriptionsPerConnection} operations may run at once on one connection.`;
    return asGraphQLError(new DomainError('rate_limit_exceeded', msg));
  }
  admitted.add(id);
  return null;
}

/** What the WebSocket door is given beside the schema and its services. */
export interface WebSocketTerms {
  /** WebSocket connections one client address may hold (0: no cap). */
  maxConnectionsPerAddress: number;
  /** Proxies whose X-Forwarded-For names the client (addresses or CIDR ranges). */
  trustedProxies: readonly string[];
  metrics?: Metrics;
  /** What a credential's expiry is timed on. */
  clock?: Clock;
}

/**
 * graphql-transport-ws on the HTTP server's port, path /graphql. The credential is checked at
 * connection time (`connectionParams.authorization`); a missing or bad one closes the socket
 * (4403) before any operation runs. One client address holds at most `maxConnectionsPerAddress`
 * sockets (0: no cap); an upgrade past it is answered 429 before the handshake. Behind a trusted
 * proxy the client's address is read from X-Forwarded-For.
 */
export function attachWebSocketDoor(
  server: Server,
  deps: WebSocketTerms & {
    schema: GraphQLSchema;
    services: GraphQLServices;
    formatError: FormatError;
    logger: Logger;
    production: boolean;
  },
): { close: () => Promise<void> } {
  const clock = deps.clock ?? systemClock;
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.maxBodyBytes });
  // What ws finds wrong that handshakeRefusal did not (a malformed Sec-WebSocket-Protocol): the same shape.
  wss.on('wsClientError', (err: Error, socket: Duplex) => refuseUpgrade(socket, handshakeFailed(err.message)));
  const cap = new ConnectionCap(deps.maxConnectionsPerAddress);
  const proxies = trustedProxies(deps.trustedProxies);
  let closing = false;

  // The door owns the server's upgrades: a WebSocket upgrade to /graphql is its own, anything
  // else asking for an upgrade (h2c, another path) is served by the app (upgrade-routing.ts).
  const ours = (req: IncomingMessage) => isWebSocketUpgradeTo(req, GRAPHQL_PATH);
  const unclaim = claimUpgrades(server, ours);
  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!ours(req)) return serveAsHttp(server, req, socket, head);
    if (closing) return void socket.destroy();
    // A handshake that cannot succeed is answered in the error shape, not with ws's text/html.
    const invalid = handshakeRefusal(req);
    if (invalid) return refuseUpgrade(socket, invalid);
    const release = cap.acquire(clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], proxies));
    if (!release) {
      if (!req.socket.remoteAddress) return void socket.destroy();
      const msg = `Too many WebSocket connections from this address: at most ${cap.perAddress} at once. Close one, or retry later.`;
      return refuseUpgrade(socket, new DomainError('rate_limit_exceeded', msg, { code: 'too_many_connections', retryAfterSeconds: 5 }));
    }
    // The place is held until the TCP socket is gone, whatever ends it (handshake refused, close, reset).
    socket.once('close', release);
    wss.handleUpgrade(req, socket, head, (ws) => {
      burstReads.track(socket as Socket);
      wss.emit('connection', ws, req);
    });
  };
  server.on('upgrade', onUpgrade);

  // Connection checks and operation starts share one gate: ~64 of them per turn is ~5–10 ms.
  // Messages, and sockets put back to reading after a burst, go by the same share.
  const PER_TURN = 64;
  const gate = new TurnGate(PER_TURN);
  const prepareDeps = { schema: deps.schema, services: deps.services, checkDocument: documentChecker(deps.schema, deps.production) };
  const format = (errors: readonly GraphQLError[]) => errors.map((e) => deps.formatError(e.toJSON(), e));
  const formatErrors = (result: ExecutionResult): FormattedExecutionResult => ({ ...result, errors: format(result.errors ?? []) });
  const keySockets = new KeySockets(deps.services, deps.logger, clock);
  // Registered before graphql-ws's own 'connection' listener, so every message goes through it,
  // each socket in a lane of its own (one socket's backlog waits for that socket alone). A turn
  // that leaves more sockets waiting than the gate's share pauses every socket's reads, which
  // then come back a slice per turn (burst-reads.ts).
  const messageGate: TurnGate = new TurnGate(PER_TURN, () => burstReads.pauseAll());
  const burstReads = new BurstReads(
    PER_TURN,
    () => messageGate.waitingLanes,
    () => deps.metrics?.wsReadPauses.inc(),
  );
  wss.on('connection', (socket: WebSocket, req: IncomingMessage) =>
    messagesThroughGate(messageGate, socket, (waiting) =>
      deps.logger.info({ ...waiting, address: req.socket.remoteAddress }, 'GraphQL WebSocket closed (1008): too many messages waiting'),
    ),
  );
  const disposable = serveGraphQLWs<Record<string, unknown>, ConnectionExtra>(
    wss,
    {
      // One execution per event and identical operation, however many subscriptions watch it.
      subscribe: sharedSubscribe,
      onConnect: async (ctx) => {
        const raw = ctx.connectionParams?.authorization ?? ctx.connectionParams?.Authorization;
        const token = typeof raw === 'string' ? bearerToken(raw) : null;
        if (!token) {
          ctx.extra.socket.close(FORBIDDEN, 'Forbidden: connection_init needs an authorization of the form "Bearer <API key or ID token>".');
          return false;
        }
        await gate.pass();
        try {
          const principal = await authenticateBearer(token, deps.services);
          ctx.extra.token = token;
          if (principal.kind === 'key') {
            ctx.extra.keyId = principal.keyId;
            keySockets.add(principal, token, ctx.extra.socket);
          } else if (principal.kind === 'account' && principal.usableUntil !== undefined) {
            closeWhenTokenExpires(ctx.extra.socket, principal.usableUntil, clock);
          }
          return true;
        } catch (err) {
          // A bad credential is 4403 with its reason, a check that could not be made 1013 (see
          // connection-refusal.ts); anything else is our own failure: 4500, logged here.
          if (err instanceof DomainError) closeRefused(ctx.extra.socket, err);
          else {
            deps.logger.error({ err }, 'WebSocket connection check failed');
            ctx.extra.socket.close(CloseCode.InternalServerError, 'Internal server error');
          }
          return false;
        }
      },
      onSubscribe: async (ctx, id, payload) => {
        // Counted before the first await: in arrival order (see `admit`).
        const refused = admit(ctx, id);
        if (refused) return [refused];
        await gate.pass();
        const args = await prepare(prepareDeps, ctx.extra.token ?? '', payload);
        // A subscription's answers go straight to this socket, serialised once per event (direct-delivery.ts).
        if (!Array.isArray(args)) {
          deliverTo(args, { id, socket: ctx.extra.socket, formatErrors, operationsOnSocket: () => Object.keys(ctx.subscriptions).length });
        }
        return args;
      },
      onNext: (_ctx, _id, _payload, _args, result) => (result.errors ? formatErrors(result) : undefined),
      onError: (_ctx, _id, _payload, errors) => format(errors),
    },
    deps.logger,
  );

  return {
    close: async () => {
      closing = true;
      server.off('upgrade', onUpgrade);
      unclaim?.();
      // Clients get 1001 "Going away"; one that does not answer the close handshake is cut off.
      const cutOff = setTimeout(() => wss.clients.forEach((c) => c.terminate()), 2000);
      await disposable.dispose();
      clearTimeout(cutOff);
    },
  };
}
