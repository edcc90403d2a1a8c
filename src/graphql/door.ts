import type { Server } from 'node:http';
import type { Express } from 'express';
import type { Logger } from '../infra/observability/logger';
import { buildGraphQLSchema } from './schema';
import { createFormatError } from './errors';
import type { GraphQLServices } from './context';
import { createHttpDoor } from './http';
import { attachWebSocketDoor, type WebSocketTerms } from './ws';

export interface GraphQLDoor {
  /** For createHttpApp's `graphql` hook: POST /graphql (and the landing page outside production). */
  mount(app: Express): void;
  /** graphql-ws on the same HTTP server, path /graphql. */
  attach(server: Server): void;
  /** Closes every socket (their subscriptions leave the event bus) and stops Apollo. */
  close(): Promise<void>;
}

/** The GraphQL front door: one schema, one error mapping, one set of limits for HTTP and WebSocket. */
export async function createGraphQLDoor(deps: WebSocketTerms & { services: GraphQLServices; logger: Logger; production: boolean }): Promise<GraphQLDoor> {
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
