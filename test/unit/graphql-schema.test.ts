import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildGraphQLSchema, schemaSDL } from '../../src/graphql/schema';

/** schema/schema.graphql is the published SDL: it must be what the code builds. */
test('schema/schema.graphql matches the schema built from the code (run `npm run schema` after a change)', async () => {
  const file = readFileSync(join(__dirname, '..', '..', 'schema', 'schema.graphql'), 'utf8');
  expect(schemaSDL(await buildGraphQLSchema())).toBe(file);
});

test("the schema has CONTRACT's operations, exactly", async () => {
  const schema = await buildGraphQLSchema();
  const names = (t: { getFields(): object } | null | undefined) => Object.keys(t?.getFields() ?? {}).sort();
  expect(names(schema.getQueryType())).toEqual(
    // CONTRACT's queries (the request log's `requests` among them), plus the console's account
    // history (ledgerEntries, usage, the delivery logs), its Buy form (creditPrice, creditQuote,
    // purchase, purchases) and the operators' (admin…, auditLog).
    [
      'account',
      'accountWebhookDeliveries',
      'adminAccount',
      'adminAccounts',
      'adminDailyTotals',
      'adminUpstreams',
      'adminWebhookDeliveries',
      'apiKeys',
      'auditLog',
      'creditPrice',
      'creditQuote',
      'ledgerEntries',
      'models',
      'purchase',
      'purchases',
      'requests',
      'usage',
      'videoJob',
      'videoJobs',
      'videoQuote',
      'webhookDeliveries',
    ],
  );
  expect(names(schema.getMutationType())).toEqual([
    'adminGrantCredits',
    'adminSetMember',
    'cancelVideoJob',
    'createApiKey',
    'createCheckout',
    'queueMotionControl',
    'queueVideo',
    'regenerateAccountWebhookSecret',
    'regenerateWebhookSecret',
    'revokeApiKey',
    'rotateApiKey',
    'setAccountWebhook',
    'setLowBalanceAlert',
    'setWebhook',
    'updateApiKey',
    'updateApiKeyPermissions',
  ]);
  expect(names(schema.getSubscriptionType())).toEqual(['accountUpdated', 'videoJobUpdated', 'videoJobsUpdated']);
  const sdl = schemaSDL(schema);
  expect(sdl).toContain('enum VideoJobStatus {\n  PROCESSING\n  COMPLETED\n  FAILED\n}');
  expect(sdl).toMatch(/cancelVideoJob\(id: ID!\): VideoJob!/);
  for (const field of [
    'id: ID!',
    'queueId: String!',
    'creditsCharged: Float!',
    'creditsUsed: Float',
    'progress: Int!',
    'createdAt: DateTime!',
    'updatedAt: DateTime!',
  ]) {
    expect(sdl).toMatch(new RegExp(`type VideoJob \\{[^}]*${field.replace(/[!]/g, '\\!')}`, 's'));
  }
});
