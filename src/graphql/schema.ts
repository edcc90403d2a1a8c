import 'reflect-metadata';
import { printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { DateTimeScalar } from './scalars';
// Import order is declaration order, and so the SDL's: the key's powers, then the account's.
import { CatalogResolver } from './resolvers/catalog-resolver';
import { VideoResolver } from './resolvers/video-resolver';
import { AccountResolver } from './resolvers/account-resolver';
import { HistoryResolver } from './resolvers/history-resolver';
import { RequestLogResolver } from './resolvers/request-log-resolver';
import { PurchaseResolver } from './resolvers/purchase-resolver';
import { SubscriptionResolver } from './resolvers/subscription-resolver';
import { AccountSubscriptionResolver } from './resolvers/account-subscription-resolver';
// Operators' operations last: they follow everything an account may do.
import { AdminAccountResolver } from './resolvers/admin-account-resolver';
import { AdminOperationsResolver } from './resolvers/admin-operations-resolver';

/**
 * type-graphql insists on a PubSub once there are subscriptions, even though ours each bring their
 * own `subscribe` (a stream over one of the domain's event buses). This one makes a topic-based
 * subscription, should one ever be declared by mistake, fail loudly.
 */
const noTopics = {
  publish(): void {
    throw new Error('GraphQL subscriptions read the domain event buses; there are no type-graphql topics.');
  },
  subscribe(): AsyncIterable<unknown> {
    throw new Error('GraphQL subscriptions read the domain event buses; there are no type-graphql topics.');
  },
};

/**
 * The schema, built from the decorated classes (code first). This module is the only way in to
 * them, so it loads reflect-metadata before any decorator runs.
 */
export function buildGraphQLSchema(): Promise<GraphQLSchema> {
  return buildSchema({
    resolvers: [
      CatalogResolver,
      VideoResolver,
      AccountResolver,
      HistoryResolver,
      RequestLogResolver,
      PurchaseResolver,
      SubscriptionResolver,
      AccountSubscriptionResolver,
      AdminAccountResolver,
      AdminOperationsResolver,
    ],
    scalarsMap: [{ type: Date, scalar: DateTimeScalar }],
    // Inputs are validated by the domain (the same zod schemas as REST), not by class-validator.
    validate: false,
    pubSub: noTopics,
  });
}

/**
 * The SDL kept in schema/schema.graphql. Not sorted: types and fields keep the order of the code
 * (roots first, fields as declared), which is deterministic and reads like CONTRACT.md.
 */
export function schemaSDL(schema: GraphQLSchema): string {
  return `${printSchema(schema)}\n`;
}
