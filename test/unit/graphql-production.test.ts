import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createGraphQLDoor, type GraphQLDoor } from '../../src/graphql/door';
import type { GraphQLServices } from '../../src/graphql/context';
import type { Logger } from '../../src/infra/observability/logger';
import { LocalTopicFeed } from '../../src/infra/events/local-topic-feed';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';

/**
 * The door alone, on a bare Express app, with production on and off: no database is needed for
 * what is checked here (nothing authenticates and nothing reaches a service).
 */
const logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined } as unknown as Logger;
/** Just enough services for the door: a key that authenticates (for WebSocket), no operator, and the key-change feed. */
const services = {
  keyChanges: new LocalTopicFeed(),
  operators: { isAdminToken: () => false, actorOfSubject: () => undefined },
  keys: {
    authenticate: async () => ({
      kind: 'key',
      keyId: 'svc_live_unit',
      accountId: 'acct_unit',
      mode: 'test',
      allowedModels: null,
      blockedModels: null,
      budgets: { day: null, week: null, month: null },
    }),
  },
} as unknown as GraphQLServices;

async function serve(production: boolean): Promise<{ url: string; close: () => Promise<void> }> {
  const door: GraphQLDoor = await createGraphQLDoor({ services, logger, production, maxConnectionsPerAddress: 0, trustedProxies: [] });
  const app = express();
  door.mount(app);
  const server: Server = createServer(app);
  door.attach(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  return {
    url,
    close: async () => {
      await door.close();
      await new Promise((r) => server.close(r));
    },
  };
}

const post = (url: string, query: string) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) }).then(async (r) => ({
    status: r.status,
    body: (await r.json()) as any,
  }));

test('in production: no introspection, no landing page', async () => {
  const s = await serve(true);
  try {
    const res = await post(s.url, '{ __schema { types { name } } }');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const page = await fetch(s.url, { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type') ?? '').not.toContain('text/html');
  } finally {
    await s.close();
  }
});

test('outside production: introspection and the landing page', async () => {
  const s = await serve(false);
  try {
    expect((await post(s.url, '{ __schema { queryType { name } } }')).body.data.__schema.queryType.name).toBe('Query');
    const page = await fetch(s.url, { headers: { accept: 'text/html' } });
    expect(page.headers.get('content-type')).toContain('text/html');
  } finally {
    await s.close();
  }
});

test('a subscription over HTTP is refused before execution', async () => {
  const s = await serve(false);
  try {
    const res = await post(s.url, 'subscription { videoJobsUpdated { id } }');
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ extensions: { code: 'BAD_REQUEST' }, message: expect.stringMatching(/WebSocket/) });
  } finally {
    await s.close();
  }
});

/** Errors a mistaken document gets, over HTTP and over WebSocket. */
async function typoErrors(url: string): Promise<string[]> {
  const http = await post(url, '{ modles { id } }');
  const client = createClient({
    url: url.replace('http', 'ws'),
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: 'Bearer svc_live_unit_key' },
  });
  const ws = await new Promise<any[]>((resolve) => {
    client.subscribe(
      { query: 'subscription { videoJobsUpdatd { id } }' },
      { next: () => undefined, error: (e) => resolve(e as any[]), complete: () => resolve([]) },
    );
  });
  await client.dispose();
  return [...http.body.errors, ...ws].map((e: { message: string }) => e.message);
}

test('in production no error hints at the schema ("Did you mean …"), over HTTP or WebSocket', async () => {
  const prod = await serve(true);
  const dev = await serve(false);
  try {
    const inProduction = await typoErrors(prod.url);
    expect(inProduction).toHaveLength(2);
    for (const message of inProduction) expect(message).not.toMatch(/did you mean|models|videoJobsUpdated/i);
    // Outside production the hints stay: they help a developer.
    expect((await typoErrors(dev.url)).join(' ')).toMatch(/Did you mean/);
  } finally {
    await prod.close();
    await dev.close();
  }
});
