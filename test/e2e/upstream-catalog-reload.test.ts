/**
 * The catalog read again without a restart, and upstream routes seen by several instances.
 * POST /admin/catalog/reload with a bad MODELS_FILE is a 400 naming the field, the running
 * catalog staying; with a good one the new routes take calls at once. With PostgreSQL and Redis,
 * two instances on one MODELS_FILE: a reload on one reaches the other within 5 s, and a route
 * opened by failures seen on one is passed by on the other.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { ADMIN_TOKEN, type TestGateway } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';
import { startChildGateway } from '../support/child-gateway';
import { freePort } from '../support/free-port';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;

let a: FakeOpenAIUpstream;
let b: FakeOpenAIUpstream;
let dir: string;
let file: string;

/** A catalog whose svc-chat-1 has `routes`, each to one of the fakes, named after a run-unique prefix. */
function writeCatalog(routes: Array<{ id: string; url: string; priority?: number }>, broken = false) {
  const catalog: CatalogInput = {
    ...BUILTIN_CATALOG,
    models: BUILTIN_CATALOG.models.map((m) =>
      m.id === 'svc-chat-1'
        ? {
            ...m,
            route: undefined,
            routes: routes.map((r) => ({
              id: r.id,
              provider: 'openai-compatible' as const,
              upstreamModel: `up-${r.id}`,
              baseUrl: r.url,
              timeoutSeconds: 2,
              priority: r.priority ?? 0,
              ...(broken ? { weight: -1 } : {}),
            })),
          }
        : m,
    ),
  };
  writeFileSync(file, JSON.stringify(catalog));
}

beforeAll(async () => {
  [a, b] = await Promise.all([startFakeOpenAIUpstream(), startFakeOpenAIUpstream()]);
  dir = mkdtempSync(join(tmpdir(), 'gw-reload-'));
  file = join(dir, 'models.json');
  writeCatalog([{ id: 'reload-a', url: a.url }]);
});
const gw = useTestGateway(() => ({ MODELS_FILE: file }));

afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const chatOn = async (target: TestGateway, secret: string) =>
  target.api('POST', '/v1/chat/completions', { token: secret, body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });
const routeIds = async (target: TestGateway) =>
  ((await target.api('GET', '/admin/upstreams', { token: ADMIN_TOKEN })).body.data as Array<{ id: string }>).map((u) => u.id);

test('a bad file is refused naming its field and the running catalog stays; a good one is taken at once', async () => {
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct);
  writeCatalog([{ id: 'reload-b', url: b.url }], true);
  const refused = await gw.api('POST', '/admin/catalog/reload', { token: ADMIN_TOKEN });
  expect(refused.status).toBe(400);
  expect(refused.body.error.param).toMatch(/^models\.\d+\.routes\.0\.weight$/);
  expect(await routeIds(gw)).toContain('reload-a');
  expect((await chatOn(gw, key.secret)).status).toBe(200);
  expect(a.requests.length).toBe(1);

  writeCatalog([
    { id: 'reload-b', url: b.url },
    { id: 'reload-a', url: a.url, priority: 1 },
  ]);
  const taken = await gw.api('POST', '/admin/catalog/reload', { token: ADMIN_TOKEN });
  expect(taken.status).toBe(200);
  expect(taken.body).toMatchObject({ reloaded: true, models: BUILTIN_CATALOG.models.length });
  expect(await routeIds(gw)).toEqual(expect.arrayContaining(['reload-a', 'reload-b']));
  expect((await chatOn(gw, key.secret)).status).toBe(200);
  expect(b.requests.at(-1)!.json.model).toBe('up-reload-b');
  // Operators only.
  expect((await gw.api('POST', '/admin/catalog/reload', { token: key.secret })).status).toBe(401);
});

test('SIGHUP re-reads MODELS_FILE in a running process; a bad file is logged and the running catalog stays', async () => {
  const childDir = mkdtempSync(join(tmpdir(), 'gw-sighup-'));
  const childFile = join(childDir, 'models.json');
  const write = (ids: string[], broken = false) => {
    file = childFile;
    writeCatalog(
      ids.map((id) => ({ id, url: a.url })),
      broken,
    );
    file = join(dir, 'models.json');
  };
  write(['hup-first']);
  const child = await startChildGateway(
    {
      DATA_DIR: childDir,
      MODELS_FILE: childFile,
      ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      ...(process.env.DATABASE_URL ? { DATABASE_URL: gw.gateway.config.databaseUrl } : {}),
    },
    await freePort(),
  );
  const ids = async () =>
    (
      (await (await fetch(`${child.url}/admin/upstreams`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { data: Array<{ id: string }> }
    ).data.map((u) => u.id);
  try {
    expect(await ids()).toContain('hup-first');
    write(['hup-second']);
    child.proc.kill('SIGHUP');
    await pollUntil(ids, (list) => list.includes('hup-second') && !list.includes('hup-first'), 5_000, 50);
    write(['hup-third'], true);
    child.proc.kill('SIGHUP');
    await pollUntil(
      async () => child.output(),
      (out) => out.includes('catalog reload refused'),
      5_000,
      50,
    );
    expect(await ids()).toContain('hup-second');
  } finally {
    await child.stop();
    rmSync(childDir, { recursive: true, force: true });
  }
});

shared('two instances on PostgreSQL and Redis', () => {
  beforeAll(async () => {
    writeCatalog([
      { id: 'pair-a', url: a.url },
      { id: 'pair-b', url: b.url, priority: 1 },
    ]);
    await gw.api('POST', '/admin/catalog/reload', { token: ADMIN_TOKEN });
  });
  const other = useTestGateway(() => ({ MODELS_FILE: file, DATABASE_URL: gw.gateway.config.databaseUrl }));

  test('a route opened by failures seen on one instance is passed by on the other', async () => {
    const acct = await gw.newAccount(10);
    const key = await gw.newKey(acct);
    a.setMode('error-500');
    for (let i = 0; i < 5; i++) expect((await chatOn(gw, key.secret)).status).toBe(200);
    const state = async () =>
      ((await other.api('GET', '/admin/upstreams', { token: ADMIN_TOKEN })).body.data as Array<{ id: string; state: string }>).find((u) => u.id === 'pair-a')
        ?.state;
    await pollUntil(state, (s) => s === 'open', 5_000, 50);
    const asked = a.requests.length;
    expect((await chatOn(other, key.secret)).status).toBe(200);
    expect(a.requests.length).toBe(asked);
    a.setMode('ok');
  });

  test('a catalog reloaded on one instance is taken by the other within 5 s', async () => {
    writeCatalog([{ id: 'pair-new', url: b.url }]);
    expect((await gw.api('POST', '/admin/catalog/reload', { token: ADMIN_TOKEN })).status).toBe(200);
    await pollUntil(
      () => routeIds(other),
      (ids) => ids.includes('pair-new'),
      5_000,
      50,
    );
  });
});
