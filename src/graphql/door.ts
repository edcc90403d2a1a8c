import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Logger } from '../infra/observability/logger';
import type { Metrics } from '../infra/observability/metrics';
import { buildGraphQLSchema } from './schema';
import { createFormatError } from './errors';
import type { GraphQLServices } from './context';
import { createHttpDoor } from './http';
import { attachWebSocketDoor } from './ws';
import type { Clock } from '../domain/ports/clock';

export interface GraphQLDoor {
  /** For createHttpApp's `graphql` hook: POST /graphql (and the landing page outside production). */
  mount(app: Express): void;
  /** graphql-ws on the same HTTP server, path /graphql. */
  attach(server: Server): void;
  /** Closes every socket (their subscriptions leave the event bus) and stops Apollo. */
  close(): Promise<void>;
}

/** The GraphQL front door: one schema, one error mapping, one set of limits for HTTP and WebSocket. */
export async function createGraphQLDoor(deps: {
  services: GraphQLServices;
  logger: Logger;
  production: boolean;
  /** WebSocket connections one client address may hold (0: no cap). */
  maxConnectionsPerAddress: number;
  /** Proxies whose X-Forwarded-For names the client (addresses or CIDR ranges). */
  trustedProxies: readonly string[];
  metrics?: Metrics;
  /** What a WebSocket credential's expiry is timed on. */
  clock?: Clock;
}): Promise<GraphQLDoor> {
  const schema = await buildGraphQLSchema();
  const formatError = createFormatError(deps.logger, deps.production);
  const shared = { schema, services: deps.services, formatError, logger: deps.logger, production: deps.production };
  const http = await createHttpDoor(shared);
  let ws: { close: () => Promise<void> } | undefined;
  return {
    mount: http.mount,
    attach: (server) => {
      ws = attachWebSocketDoor(server, {
        ...shared,
        maxConnectionsPerAddress: deps.maxConnectionsPerAddress,
        trustedProxies: deps.trustedProxies,
        metrics: deps.metrics,
        clock: deps.clock,
      });
    },
    close: async () => {
      await ws?.close();
      await http.stop();
    },
  };
}
