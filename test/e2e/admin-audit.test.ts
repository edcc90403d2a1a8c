/**
 * Operators and the audit log: every operator action, through REST and through GraphQL, with
 * ADMIN_TOKEN or an operator's ID token (its subject in ADMIN_SUBJECTS), writes one audit entry
 * naming its actor, with its target before and after; a refused action writes none. An ordinary
 * account's ID token gets 403 `permission_denied` on every /admin route and every operator
 * GraphQL field, over HTTP and over WebSocket: both lists are read from what the gateway serves
 * (the Express routes, the schema), so a new operation cannot be left out.
 */
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { getNamedType, isEnumType, isInputObjectType, isNonNullType, isListType, isObjectType, type GraphQLField, type GraphQLInputType } from 'graphql';
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { writeModelsFile } from '../support/models-file';
import { registeredRoutes } from '../support/openapi-structure';
import { startFakeStripe, type FakeStripe } from '../support/fake-stripe';
import { buildGraphQLSchema } from '../../src/graphql/schema';

const OPERATOR = 'ops-alice';
const models = writeModelsFile({});
let stripe: FakeStripe;
beforeAll(async () => {
  stripe = await startFakeStripe();
});
afterAll(async () => {
  models.remove();
  await stripe.close();
});
const gw = useTestGateway(() => ({
  ADMIN_SUBJECTS: `${OPERATOR}, ops-bob`,
  MODELS_FILE: models.path,
  STRIPE_SECRET_KEY: stripe.secretKey,
  STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
  STRIPE_API_BASE: stripe.url,
}));
beforeAll(() => stripe.setWebhookUrl(`${gw.url}/webhooks/stripe`));

let operatorToken: string;
let ordinary: TestAccount;
beforeAll(async () => {
  operatorToken = await gw.gateway.devIdentity!.issue(OPERATOR);
  ordinary = await gw.newAccount(0);
});

const gql = async (token: string, query: string, variables: Record<string, unknown> = {}) =>
  (await gw.api('POST', '/graphql', { token, body: { query, variables } })).body;

/** The audit log as REST lists it, newest first. */
const audit = async (first = 100) => {
  const res = await gw.api('GET', `/admin/audit?first=${first}`, { token: ADMIN_TOKEN });
  expect(res.status).toBe(200);
  return res.body.data as any[];
};

/** Runs `act` and answers the entries it added (none or more), oldest first. */
async function added(act: () => Promise<unknown>): Promise<any[]> {
  const [newest] = await audit(1);
  await act();
  const after = await audit();
  return after.filter((e) => newest === undefined || BigInt(e.id) > BigInt(newest.id)).reverse();
}

describe('every operator action writes one audit entry', () => {
  test('REST: grant and take-back, with ADMIN_TOKEN and with an operator ID token', async () => {
    const acct = await gw.newAccount(0);
    const grant = await added(() => gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 12.5, reason: 'welcome' } }));
    expect(grant).toEqual([
      {
        id: expect.stringMatching(/^\d+$/),
        object: 'audit_entry',
        actor: 'token',
        action: 'credits.grant',
        target: acct.id,
        before: { balance: 0, member: false },
        after: { balance: 12.5, member: false, credits: 12.5, reason: 'welcome' },
        created: expect.any(Number),
      },
    ]);
    const take = await added(() => gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: operatorToken, body: { credits: -20, reason: 'mistake' } }));
    expect(take).toEqual([
      expect.objectContaining({
        actor: `sub:${OPERATOR}`,
        action: 'credits.take_back',
        target: acct.id,
        before: { balance: 12.5, member: false },
        after: { balance: 0, member: false, credits: -20, reason: 'mistake' },
      }),
    ]);
    expect(await gw.balance(acct)).toBe(0);
  });

  test('REST: member on and off, and a catalog reload', async () => {
    const acct = await gw.newAccount(0);
    const on = await added(() => gw.api('PATCH', `/admin/accounts/${acct.id}`, { token: operatorToken, body: { member: true } }));
    expect(on).toEqual([
      expect.objectContaining({
        actor: `sub:${OPERATOR}`,
        action: 'account.member',
        target: acct.id,
        before: { balance: 0, member: false },
        after: { balance: 0, member: true },
      }),
    ]);
    const off = await added(() => gw.api('PATCH', `/admin/accounts/${acct.id}`, { token: ADMIN_TOKEN, body: { member: false } }));
    expect(off).toEqual([
      expect.objectContaining({ actor: 'token', action: 'account.member', before: { balance: 0, member: true }, after: { balance: 0, member: false } }),
    ]);
    const reload = await added(async () => expect((await gw.api('POST', '/admin/catalog/reload', { token: operatorToken })).status).toBe(200));
    expect(reload).toEqual([
      expect.objectContaining({
        actor: `sub:${OPERATOR}`,
        action: 'catalog.reload',
        target: 'catalog',
        before: { models: expect.any(Number), routes: expect.any(String) },
        after: { models: expect.any(Number), routes: expect.any(String) },
      }),
    ]);
  });

  test('GraphQL: adminGrantCredits (both ways) and adminSetMember, with an operator ID token and with ADMIN_TOKEN', async () => {
    const acct = await gw.newAccount(0);
    const grantQ = `mutation($id: ID!, $c: Float!, $r: String!) { adminGrantCredits(accountId: $id, credits: $c, reason: $r) { id balance member } }`;
    let answer: any;
    const grant = await added(async () => (answer = await gql(operatorToken, grantQ, { id: acct.id, c: 3, r: 'graphql grant' })));
    expect(answer).toEqual({ data: { adminGrantCredits: { id: acct.id, balance: 3, member: false } } });
    expect(grant).toEqual([
      expect.objectContaining({
        actor: `sub:${OPERATOR}`,
        action: 'credits.grant',
        before: { balance: 0, member: false },
        after: { balance: 3, member: false, credits: 3, reason: 'graphql grant' },
      }),
    ]);
    const take = await added(() => gql(ADMIN_TOKEN, grantQ, { id: acct.id, c: -1, r: 'graphql take' }));
    expect(take).toEqual([
      expect.objectContaining({
        actor: 'token',
        action: 'credits.take_back',
        before: { balance: 3, member: false },
        after: expect.objectContaining({ balance: 2 }),
      }),
    ]);
    const member = await added(() => gql(operatorToken, `mutation($id: ID!) { adminSetMember(accountId: $id, member: true) { member } }`, { id: acct.id }));
    expect(member).toEqual([expect.objectContaining({ action: 'account.member', before: { balance: 2, member: false }, after: { balance: 2, member: true } })]);
    expect(await gw.balance(acct)).toBe(2);
  });

  test('a refused action writes nothing: a bad body, an unknown account, a removal from an empty balance', async () => {
    const acct = await gw.newAccount(0);
    const none = await added(async () => {
      expect((await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 1 } })).status).toBe(400);
      expect((await gw.api('POST', '/admin/accounts/acct_missing/credits', { token: ADMIN_TOKEN, body: { credits: 1, reason: 'x' } })).status).toBe(404);
      expect((await gw.api('PATCH', '/admin/accounts/acct_missing', { token: operatorToken, body: { member: true } })).status).toBe(404);
      const bad = await gql(operatorToken, `mutation { adminGrantCredits(accountId: "${acct.id}", credits: 0, reason: "zero") { id } }`);
      expect(bad.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'credits' });
      const missing = await gql(operatorToken, `mutation { adminSetMember(accountId: "acct_missing", member: true) { id } }`);
      expect(missing.errors[0].extensions.code).toBe('not_found_error');
    });
    expect(none).toEqual([]);
  });

  test('an action refused inside its transaction (past the most a balance may hold) rolls its audit entry back with it', async () => {
    const acct = await gw.newAccount(0);
    for (let i = 0; i < 9; i++) await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 1e9, reason: 'fill' } });
    // The ledger entry is written, then the bound checked: the refusal rolls back the entry, the balance and the audit row.
    const none = await added(async () => {
      const res = await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 7_199_255, reason: 'too much' } });
      expect(res.body.error).toMatchObject({ code: 'balance_too_large', param: 'credits' });
    });
    expect(none).toEqual([]);
    expect(await gw.balance(acct)).toBe(9e9);
  });

  test('GET /admin/audit and GraphQL auditLog list the same entries, newest first, page by page; no credential is in them', async () => {
    const acct = await gw.newAccount(0);
    for (const credits of [1, 2, 3])
      await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: operatorToken, body: { credits, reason: `r${credits}` } });
    const first = await gw.api('GET', '/admin/audit?first=2', { token: operatorToken });
    expect(first.body).toMatchObject({ object: 'list', hasMore: true, nextCursor: first.body.data[1].id });
    expect(first.body.data.map((e: any) => e.after.reason)).toEqual(['r3', 'r2']);
    const next = await gw.api('GET', `/admin/audit?first=1&after=${first.body.nextCursor}`, { token: operatorToken });
    expect(next.body.data.map((e: any) => e.after.reason)).toEqual(['r1']);

    const viaGraphql = await gql(
      operatorToken,
      `{ auditLog(first: 3) { nodes { id actor action target before after created } pageInfo { hasNextPage endCursor } } }`,
    );
    const rest = (await audit(3)).map((e) => ({ ...e, created: new Date(e.created * 1000).toISOString().replace(/\.\d+Z$/, '') }));
    expect(viaGraphql.data.auditLog.nodes.map((n: any) => ({ ...n, created: n.created.replace(/\.\d+Z$/, '') }))).toEqual(
      rest.map(({ object: _object, ...e }) => e),
    );
    expect(viaGraphql.data.auditLog.pageInfo).toEqual({ hasNextPage: true, endCursor: rest[2]!.id });
    const whole = JSON.stringify(await audit());
    for (const secret of [ADMIN_TOKEN, operatorToken, ordinary.idToken]) expect(whole).not.toContain(secret);
    expect((await gw.api('GET', '/admin/audit?after=abc', { token: ADMIN_TOKEN })).body.error).toMatchObject({ type: 'invalid_request_error', param: 'after' });
  });
});

describe('operators read any account', () => {
  test('adminAccounts finds by id and by subject; adminAccount has balance, member, keys and the ledger', async () => {
    const acct = await gw.newAccount(7);
    const key = await gw.newKey(acct, { name: 'found key' });
    const byId = await gql(operatorToken, `query($s: String) { adminAccounts(search: $s) { nodes { id subject balance member } pageInfo { hasNextPage } } }`, {
      s: acct.id,
    });
    expect(byId.data.adminAccounts.nodes).toEqual([{ id: acct.id, subject: acct.subject, balance: 7, member: false }]);
    const bySubject = await gql(ADMIN_TOKEN, `query($s: String) { adminAccounts(search: $s) { nodes { id } } }`, { s: acct.subject.slice(5).toUpperCase() });
    expect(bySubject.data.adminAccounts.nodes).toEqual([{ id: acct.id }]);
    expect((await gql(ADMIN_TOKEN, `{ adminAccounts(search: "100%_") { nodes { id } } }`)).data.adminAccounts.nodes).toEqual([]);

    const detail = await gql(
      operatorToken,
      `query($id: ID!) { adminAccount(id: $id) { id balance member keys { id name } ledger(first: 5) { nodes { kind credits reason } } } }`,
      { id: acct.id },
    );
    expect(detail.data.adminAccount).toEqual({
      id: acct.id,
      balance: 7,
      member: false,
      keys: [{ id: key.id, name: 'found key' }],
      ledger: { nodes: [{ kind: 'GRANT', credits: 7, reason: 'test' }] },
    });
    const missing = await gql(operatorToken, `{ adminAccount(id: "acct_missing") { id } }`);
    expect(missing.errors[0].extensions).toMatchObject({ code: 'not_found_error', param: 'id' });
  });

  test('adminUpstreams is GET /admin/upstreams; adminDailyTotals has every day of the range with what was spent', async () => {
    const rest = await gw.api('GET', '/admin/upstreams', { token: operatorToken });
    const graphql = await gql(operatorToken, `{ adminUpstreams { id provider models state window { calls failures } lastError openedAt } }`);
    expect(graphql.data.adminUpstreams).toEqual(rest.body.data);

    const acct = await gw.newAccount(100);
    const key = await gw.newKey(acct);
    const today = new Date().toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const totals = async () =>
      (await gql(operatorToken, `query($f: String, $t: String) { adminDailyTotals(from: $f, to: $t) { day sold spent } }`, { f: yesterday, t: today })).data
        .adminDailyTotals as Array<{ day: string; sold: number; spent: number }>;
    const before = await totals();
    expect(before.map((d) => d.day)).toEqual([yesterday, today]);
    const job = await gw.api('POST', '/v1/video/queue', {
      token: key.secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'a pier', resolution: '480p' },
    });
    expect(job.status).toBe(200);
    const charged = Number(job.headers.get('x-svc-credits'));
    expect(charged).toBeGreaterThan(0);
    const after = await totals();
    expect(after[1]!.spent - before[1]!.spent).toBeCloseTo(charged, 6);
    expect(after[0]).toEqual(before[0]);
    const bad = await gql(operatorToken, `{ adminDailyTotals(from: "2026-02-30") { day } }`);
    expect(bad.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'from' });
  });

  test("a paid purchase is the day's credits sold, and is listed with its account", async () => {
    const acct = await gw.newAccount(0);
    const today = new Date().toISOString().slice(0, 10);
    const soldToday = async () =>
      (await gql(operatorToken, `query($d: String) { adminDailyTotals(from: $d, to: $d) { day sold spent } }`, { d: today })).data.adminDailyTotals[0]
        .sold as number;
    const before = await soldToday();
    const checkout = await gw.api('POST', '/account/checkout', { token: acct.idToken, body: { credits: 700 } });
    expect(checkout.status).toBe(200);
    // Not sold until paid.
    expect(await soldToday()).toBe(before);
    expect((await fetch(`${stripe.url}/checkout/${checkout.body.id}/pay`, { method: 'POST', redirect: 'manual' })).status).toBe(303);
    expect(await gw.balance(acct)).toBe(700);
    expect(await soldToday()).toBe(before + 700);
    // An operator's grant is no sale.
    await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 5, reason: 'not a sale' } });
    expect(await soldToday()).toBe(before + 700);
    const detail = await gql(operatorToken, `query($id: ID!) { adminAccount(id: $id) { purchases { nodes { id credits amountUsd status } } } }`, {
      id: acct.id,
    });
    expect(detail.data.adminAccount.purchases.nodes).toEqual([{ id: checkout.body.id, credits: 700, amountUsd: expect.any(Number), status: 'COMPLETED' }]);
  });

  test('adminWebhookDeliveries is GET /admin/webhook-deliveries', async () => {
    const acct = await gw.newAccount(0);
    const key = await gw.newKey(acct);
    const rest = await gw.api('GET', `/admin/webhook-deliveries?keyId=${key.id}`, { token: operatorToken });
    const graphql = await gql(operatorToken, `query($k: ID) { adminWebhookDeliveries(keyId: $k) { eventId } }`, { k: key.id });
    expect(graphql.data.adminWebhookDeliveries).toEqual(rest.body.data.map((d: any) => ({ eventId: d.eventId })));
    const bad = await gql(operatorToken, `{ adminWebhookDeliveries(first: 0) { eventId } }`);
    expect(bad.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'first' });
  });
});

/** A literal for an argument of this type: enough to pass GraphQL's validation, so the resolver's own check is what answers. */
function literal(type: GraphQLInputType): string {
  if (isNonNullType(type)) return literal(type.ofType);
  if (isListType(type)) return `[${literal(type.ofType)}]`;
  if (isEnumType(type)) return type.getValues()[0]!.name;
  if (isInputObjectType(type)) {
    const required = Object.values(type.getFields()).filter((f) => isNonNullType(f.type));
    return `{ ${required.map((f) => `${f.name}: ${literal(f.type)}`).join(', ')} }`;
  }
  return ({ Int: '1', Float: '1', Boolean: 'true', DateTime: '"2999-01-01T00:00:00Z"' } as Record<string, string>)[type.name] ?? '"x"';
}

/** One root field's document, its required arguments given, its result selecting only __typename. */
function documentOf(kind: 'query' | 'mutation', field: GraphQLField<unknown, unknown>): string {
  const args = field.args.filter((a) => isNonNullType(a.type)).map((a) => `${a.name}: ${literal(a.type)}`);
  const selection = isObjectType(getNamedType(field.type)) ? ' { __typename }' : '';
  return `${kind} { ${field.name}${args.length ? `(${args.join(', ')})` : ''}${selection} }`;
}

/** The operator operations, by the name every one of them carries. */
const isOperatorField = (name: string) => name.startsWith('admin') || name === 'auditLog';

describe('an ordinary account is refused every operator operation with permission_denied', () => {
  let roots: Array<{ name: string; document: string }>;
  beforeAll(async () => {
    const schema = await buildGraphQLSchema();
    roots = [
      ...Object.values(schema.getQueryType()!.getFields()).map((f) => ({ name: f.name, document: documentOf('query', f) })),
      ...Object.values(schema.getMutationType()!.getFields()).map((f) => ({ name: f.name, document: documentOf('mutation', f) })),
    ];
  });

  test('every /admin route the gateway serves: 403 permission_denied for an ordinary ID token, 401 for an API key, served for an operator', async () => {
    const routes = registeredRoutes(gw.gateway.rest.app).routes.filter(
      (r): r is { method: string; path: string } => typeof r.path === 'string' && r.path.startsWith('/admin'),
    );
    expect(routes.map((r) => `${r.method} ${r.path}`).sort()).toEqual(
      expect.arrayContaining([
        'get /admin/audit',
        'get /admin/upstreams',
        'get /admin/webhook-deliveries',
        'patch /admin/accounts/:accountId',
        'post /admin/accounts/:accountId/credits',
        'post /admin/catalog/reload',
      ]),
    );
    const key = await gw.newKey(ordinary);
    // Bodies that no route takes as they are (`{}`): only the answers are checked against the document.
    const send = (r: { method: string; path: string }, token: string) =>
      gw.api(r.method.toUpperCase(), r.path.replace(':accountId', ordinary.id), { token, body: r.method === 'get' ? undefined : {}, unchecked: true });
    for (const r of routes) {
      const denied = await send(r, ordinary.idToken);
      expect([r.path, denied.status, denied.body.error?.type, denied.body.error?.code]).toEqual([r.path, 403, 'permission_denied', 'permission_denied']);
      expect([r.path, (await send(r, key.secret)).status]).toEqual([r.path, 401]);
      // The operator gets past the check: whatever the route answers to `{}`, it is not a refusal of the credential.
      const served = await fetch(gw.url + r.path.replace(':accountId', ordinary.id), {
        method: r.method.toUpperCase(),
        headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
        body: r.method === 'get' ? undefined : '{}',
      });
      expect([r.path, [401, 403].includes(served.status)]).toEqual([r.path, false]);
    }
  });

  test('over HTTP: exactly the operator fields of the schema answer permission_denied, and an operator is let through each', async () => {
    const denied: string[] = [];
    for (const root of roots) {
      const body = await gql(ordinary.idToken, root.document);
      if (body.errors?.some((e: any) => e.extensions?.code === 'permission_denied')) denied.push(root.name);
      if (isOperatorField(root.name)) {
        const codes = ((await gql(operatorToken, root.document)).errors ?? []).map((e: any) => e.extensions?.code);
        expect([root.name, codes.filter((c: string) => c === 'permission_denied' || c === 'authentication_error')]).toEqual([root.name, []]);
      }
    }
    const operatorFields = roots.map((r) => r.name).filter(isOperatorField);
    expect(operatorFields.length).toBeGreaterThanOrEqual(8);
    expect(denied.sort()).toEqual(operatorFields.sort());
  });

  test('over WebSocket: every operator field answers permission_denied to an ordinary ID token', async () => {
    const wsUrl = `${gw.url.replace(/^http/, 'ws')}/graphql`;
    const client: Client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${ordinary.idToken}` },
    });
    const operatorClient: Client = createClient({
      url: wsUrl,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${operatorToken}` },
    });
    const codes = (c: Client, query: string) =>
      new Promise<string[]>((resolve) => {
        let errors: any[] = [];
        c.subscribe(
          { query },
          {
            next: (r) => void (errors = [...(r.errors ?? [])]),
            error: (e) => resolve((e as any[]).map((x) => x.extensions?.code)),
            complete: () => resolve(errors.map((e) => e.extensions?.code)),
          },
        );
      });
    try {
      for (const root of roots.filter((r) => isOperatorField(r.name))) {
        expect([root.name, await codes(client, root.document)]).toEqual([root.name, ['permission_denied']]);
        expect([root.name, (await codes(operatorClient, root.document)).includes('permission_denied')]).toEqual([root.name, false]);
      }
    } finally {
      await client.dispose();
      await operatorClient.dispose();
    }
  });
});
