import 'reflect-metadata';
import { parse, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { buildGraphQLSchema } from '../../src/graphql/schema';
import { sharedSubscribe } from '../../src/graphql/shared-execution';
import { LocalJobEventBus } from '../../src/infra/events/local-event-bus';
import type { GraphQLContext } from '../../src/graphql/context';
import type { VideoJob } from '../../src/domain/video/video-job';

let schema: GraphQLSchema;
beforeAll(async () => {
  schema = await buildGraphQLSchema();
});

const at = new Date(Date.UTC(2026, 0, 1));
const job = {
  id: 'vid_1',
  accountId: 'acct_1',
  status: 'COMPLETED',
  model: 'm',
  queueId: 'q',
  creditsCharged: 10,
  creditsUsed: 10,
  url: 'https://x/v.mp4',
  reason: null,
  createdAt: at,
  updatedAt: at,
} as unknown as VideoJob;

test('subscriptions with the same document, principal and variables get one answer per event; another principal its own', async () => {
  const bus = new LocalJobEventBus();
  const document = parse('subscription { videoJobsUpdated { id status url } }');
  const context = (keyId: string): GraphQLContext => ({
    principal: { kind: 'key', keyId, accountId: 'acct_1' } as GraphQLContext['principal'],
    services: { events: bus } as unknown as GraphQLContext['services'],
  });
  const open = async (keyId: string) => (await sharedSubscribe({ schema, document, contextValue: context(keyId) })) as AsyncGenerator<ExecutionResult>;
  const [a, b, c] = await Promise.all([open('k1'), open('k1'), open('k2')]);
  expect(bus.listeners).toBe(3);
  const reads = [a.next(), b.next(), c.next()];
  await bus.publish({ job });
  const [ra, rb, rc] = await Promise.all(reads);
  expect(ra.value).toEqual({ data: { videoJobsUpdated: { id: 'vid_1', status: 'COMPLETED', url: 'https://x/v.mp4' } } });
  expect(rb.value).toBe(ra.value);
  expect(rc.value).toEqual(ra.value);
  expect(rc.value).not.toBe(ra.value);

  // Ending a mapped stream ends its source: it leaves the bus.
  await a.return(undefined);
  expect(bus.listeners).toBe(2);
  await Promise.all([b.return(undefined), c.return(undefined)]);
  expect(bus.listeners).toBe(0);
});

test('an operation that cannot start answers its errors, not a stream', async () => {
  const document = parse('subscription { videoJobsUpdated { id } }');
  const result = await sharedSubscribe({ schema, document, contextValue: { principal: null, services: {} } });
  expect((result as ExecutionResult).errors?.[0]?.message).toMatch(/credentials/);
});
