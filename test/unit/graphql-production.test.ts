import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createGraphQLDoor, type GraphQLDoor } from '../../src/graphql/door';
import type { GraphQLServices } from '../../src/graphql/context';
import type { Logger } from '../../src/infra/observability/logger';

/**
 * The door alone, on a bare Express app, with production on and off: no database is needed for
 * what is checked here (nothing authenticates and nothing reaches a service).
 */
const logger = { error: () => undefined, warn: () => undefined, info: () => undefined, debug: () => undefined } as unknown as Logger;
const services = {} as GraphQLServices;

async function serve(production: boolean): Promise<{ url: string; close: () => Promise<void> }> {
  const door: GraphQLDoor = await createGraphQLDoor({ services, logger, production });
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
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

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
