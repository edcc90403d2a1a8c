/**
 * Reading the request log: GET /account/requests and GraphQL `requests` page the same rows
 * newest first under the same filters and bounds (refusals naming the argument), the export
 * streams them as CSV (escaped) or JSON lines, and every read is the caller's account's alone.
 * Rows are seeded through the repository, at chosen times.
 */
import { useTestGateway } from '../support/use-test-gateway';
import type { TestAccount } from '../support/gateway-harness';
import type { RequestLogRow } from '../../src/domain/requests/call-log';
import { SqlRequestLog } from '../../src/infra/db/repositories/sql-request-log';

const gw = useTestGateway();

/** Today's rows (kept whatever the retention), from 01:00 UTC on. */
const TODAY = new Date().toISOString().slice(0, 10);
const YESTERDAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
const T0 = Date.parse(`${TODAY}T01:00:00Z`);
let serial = 0;

function row(acct: TestAccount, keyId: string, at: number, extra: Partial<RequestLogRow> = {}): RequestLogRow {
  return {
    id: `req_seed${(++serial).toString().padStart(12, '0')}`,
    createdMs: at,
    accountId: acct.id,
    keyId,
    endpoint: '/v1/chat/completions',
    idempotencyKey: null,
    model: 'svc-chat-1',
    status: 200,
    creditsMicro: 1500,
    promptTokens: 10,
    completionTokens: 5,
    images: 0,
    seconds: 0,
    latencyMs: 42,
    errorType: null,
    errorCode: null,
    jobId: null,
    ...extra,
  };
}

/** An account with two keys and 25 rows a minute apart (the last two at the same moment), of two models and three statuses. */
async function seeded() {
  const acct = await gw.newAccount();
  const a = await gw.newKey(acct, { name: 'a', mode: 'test' });
  const b = await gw.newKey(acct, { name: 'b', mode: 'test' });
  const rows = Array.from({ length: 25 }, (_, i) =>
    row(acct, i % 2 ? b.id : a.id, T0 + Math.min(i, 23) * 60_000, {
      model: i % 3 ? 'svc-chat-1' : 'svc-creative-v8',
      status: i % 5 === 0 ? 429 : 200,
      ...(i % 5 === 0 ? { errorType: 'rate_limit_exceeded', creditsMicro: 0 } : {}),
    }),
  );
  await new SqlRequestLog(gw.gateway.database.db).insert(rows);
  // Newest first; of two at one moment, the greater id first.
  const order = [...rows].sort((x, y) => y.createdMs - x.createdMs || (y.id > x.id ? 1 : -1)).map((r) => r.id);
  return { acct, a, b, rows, order };
}

const list = (acct: TestAccount, query: string) => gw.api('GET', `/account/requests${query}`, { token: acct.idToken });
const gql = (token: string, query: string, variables: Record<string, unknown> = {}) => gw.api('POST', '/graphql', { token, body: { query, variables } });

test('newest first, 20 a page by default, every row once across the pages, the same on GraphQL', async () => {
  const { acct, order } = await seeded();
  const first = await list(acct, '');
  expect(first.status).toBe(200);
  expect(first.body).toMatchObject({ object: 'list', hasMore: true });
  expect(first.body.data.map((r: { id: string }) => r.id)).toEqual(order.slice(0, 20));
  expect(first.body.data[0]).toEqual({
    id: order[0],
    created: Math.floor((T0 + 23 * 60_000) / 1000),
    keyId: expect.stringMatching(/^svc_test_/),
    model: expect.any(String),
    endpoint: '/v1/chat/completions',
    status: expect.any(Number),
    credits: expect.any(Number),
    usage: { promptTokens: 10, completionTokens: 5, images: 0, seconds: 0 },
    latencyMs: 42,
    idempotencyKey: null,
    error: null,
    jobId: null,
  });
  const seen: string[] = [];
  let after: string | null = null;
  do {
    const page: { body: { data: { id: string }[]; nextCursor: string | null } } = await list(acct, `?first=7${after ? `&after=${after}` : ''}`);
    seen.push(...page.body.data.map((r) => r.id));
    after = page.body.nextCursor;
  } while (after);
  expect(seen).toEqual(order);

  const q = `query($first: Int, $after: String) { requests(first: $first, after: $after) {
    nodes { id created keyId model endpoint status credits usage { promptTokens completionTokens images seconds } latencyMs idempotencyKey error { type code } jobId }
    pageInfo { hasNextPage endCursor } } }`;
  const g1 = await gql(acct.idToken, q, { first: 20 });
  expect(g1.body.errors).toBeUndefined();
  expect(g1.body.data.requests.nodes.map((n: { id: string }) => n.id)).toEqual(order.slice(0, 20));
  expect(g1.body.data.requests.nodes[0].created).toBe(new Date(T0 + 23 * 60_000).toISOString());
  const g2 = await gql(acct.idToken, q, { first: 20, after: g1.body.data.requests.pageInfo.endCursor });
  expect(g2.body.data.requests.nodes.map((n: { id: string }) => n.id)).toEqual(order.slice(20));
  expect(g2.body.data.requests.pageInfo.hasNextPage).toBe(false);
});

test('filters: key, model, status, outcome, and a time range as RFC 3339, Unix seconds or days', async () => {
  const { acct, b, rows } = await seeded();
  const ids = async (query: string) => ((await list(acct, `?first=100&${query}`)).body.data as { id: string }[]).map((r) => r.id).sort();
  const expected = (keep: (r: RequestLogRow) => boolean) =>
    rows
      .filter(keep)
      .map((r) => r.id)
      .sort();
  expect(await ids(`keyId=${b.id}`)).toEqual(expected((r) => r.keyId === b.id));
  expect(await ids('model=svc-creative-v8')).toEqual(expected((r) => r.model === 'svc-creative-v8'));
  expect(await ids('status=429')).toEqual(expected((r) => r.status === 429));
  expect(await ids('outcome=error')).toEqual(expected((r) => r.status >= 400));
  expect(await ids('outcome=ok')).toEqual(expected((r) => r.status < 400));
  expect(expected((r) => r.status >= 400).length).toBeGreaterThan(0);
  const failed = await gql(acct.idToken, `{ requests(first: 100, outcome: ERROR) { nodes { id } } }`);
  expect(failed.body.data.requests.nodes.map((n: { id: string }) => n.id).sort()).toEqual(expected((r) => r.status >= 400));
  const from = T0 + 5 * 60_000;
  const to = T0 + 9 * 60_000;
  const inRange = expected((r) => r.createdMs >= from && r.createdMs <= to);
  expect(inRange).toHaveLength(5);
  expect(await ids(`from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`)).toEqual(inRange);
  expect(await ids(`from=${from / 1000}&to=${to / 1000}`)).toEqual(inRange);
  expect(await ids(`from=${TODAY}&to=${TODAY}`)).toEqual(expected(() => true));
  expect(await ids(`to=${YESTERDAY}`)).toEqual([]);
  expect(await ids(`keyId=${b.id}&status=429&model=svc-chat-1`)).toEqual(expected((r) => r.keyId === b.id && r.status === 429 && r.model === 'svc-chat-1'));
});

test('bad arguments answer 400 naming them, on both doors', async () => {
  const acct = await gw.newAccount();
  for (const [query, param] of [
    ['first=0', 'first'],
    ['first=101', 'first'],
    ['after=not-a-cursor', 'after'],
    ['status=abc', 'status'],
    ['status=700', 'status'],
    ['outcome=failed', 'outcome'],
    ['from=2026-13-01', 'from'],
    ['to=yesterday', 'to'],
    ['from=2026-01-02&to=2026-01-01', 'from'],
    ['keyId=acct_1', 'keyId'],
    ['colour=blue', 'colour'],
  ]) {
    const res = await gw.api('GET', `/account/requests?${query}`, { token: acct.idToken, unchecked: true });
    expect([query, res.status, res.body.error?.param]).toEqual([query, 400, param]);
  }
  const bad = await gql(acct.idToken, `{ requests(first: 0) { nodes { id } } }`);
  expect(bad.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'first' });
  const range = await gql(acct.idToken, `{ requests(from: "2026-01-02", to: "2026-01-01") { nodes { id } } }`);
  expect(range.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'from' });
  expect((await gw.api('GET', '/account/requests/export?format=xml', { token: acct.idToken, unchecked: true })).body.error.param).toBe('format');
});

test('another account reads none of them, by key, cursor or GraphQL; an API key reads nothing', async () => {
  const { acct, a } = await seeded();
  const other = await gw.newAccount();
  const mine = await list(acct, '?first=1');
  expect((await list(other, '')).body.data).toEqual([]);
  expect((await list(other, `?keyId=${a.id}`)).body.data).toEqual([]);
  expect((await list(other, `?after=${mine.body.nextCursor}`)).body.data).toEqual([]);
  expect((await gql(other.idToken, `{ requests { nodes { id } } }`)).body.data.requests.nodes).toEqual([]);
  const exported = await fetch(`${gw.url}/account/requests/export?format=jsonl`, { headers: { authorization: `Bearer ${other.idToken}` } });
  expect(await exported.text()).toBe('');
  expect((await gw.api('GET', '/account/requests', { token: a.secret, unchecked: true })).status).toBe(401);
  expect((await gql(a.secret, `{ requests { nodes { id } } }`)).body.errors[0].extensions.code).toBe('permission_error');
});

test('the export: CSV with its header and every cell escaped, JSON lines as the list gives them', async () => {
  const acct = await gw.newAccount();
  const key = await gw.newKey(acct, { mode: 'test' });
  const tricky = row(acct, key.id, T0 + 1, { model: 'a,"b"\nc', idempotencyKey: '=HYPERLINK("x")', errorType: 'invalid_request_error', errorCode: 'x' });
  const plain = row(acct, key.id, T0, { jobId: 'vid_1', creditsMicro: 10_000_000 });
  await new SqlRequestLog(gw.gateway.database.db).insert([tricky, plain]);

  const csv = await gw.api('GET', '/account/requests/export?format=csv', { token: acct.idToken });
  expect(csv.status).toBe(200);
  expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
  expect(csv.headers.get('content-disposition')).toBe('attachment; filename="requests.csv"');
  expect(csv.body).toBe(
    'id,created,keyId,model,endpoint,status,credits,promptTokens,completionTokens,images,seconds,latencyMs,idempotencyKey,errorType,errorCode,jobId\r\n' +
      `${tricky.id},${new Date(T0 + 1).toISOString()},${key.id},"a,""b""\nc",/v1/chat/completions,200,0.0015,10,5,0,0,42,"'=HYPERLINK(""x"")",invalid_request_error,x,\r\n` +
      `${plain.id},${new Date(T0).toISOString()},${key.id},svc-chat-1,/v1/chat/completions,200,10,10,5,0,0,42,,,,vid_1\r\n`,
  );

  const jsonl = await gw.api('GET', '/account/requests/export?format=jsonl', { token: acct.idToken });
  expect(jsonl.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
  const lines = (jsonl.body as string)
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  expect(lines).toEqual((await list(acct, '')).body.data);
  expect(lines[0]).toMatchObject({ model: 'a,"b"\nc', error: { type: 'invalid_request_error', code: 'x' } });
});
