import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';
import { startWebhookReceiver } from '../support/webhook-receiver';

let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '0.2', WEBHOOK_ALLOW_LOCAL: '1' });
afterAll(async () => {
  await receiver.close();
});

const gql = (query: string, token: string, variables?: Record<string, unknown>) => gw.api('POST', '/graphql', { token, body: { query, variables } });
const today = () => new Date().toISOString().slice(0, 10);
const TEXT = 'svc-2.5-preview-text-to-video';

async function spend() {
  const acct = await gw.newAccount(200);
  const a = await gw.newKey(acct, { name: 'A' });
  const b = await gw.newKey(acct, { name: 'B' });
  const queue = (secret: string, prompt: string, resolution: string) =>
    gw.api('POST', '/v1/video/queue', { token: secret, body: { model: TEXT, prompt, duration: '5s', resolution } });
  const ok = await queue(a.secret, 'a lighthouse', '720p'); // 15 credits
  const failed = await queue(b.secret, 'a storm [fail]', '480p'); // 10 credits, refunded
  for (const [secret, id] of [
    [a.secret, ok.body.id],
    [b.secret, failed.body.id],
  ]) {
    const done = await pollUntil(
      () => gw.api('POST', '/v1/video/retrieve', { token: secret, body: { id } }),
      (r) => r.body.status !== 'PROCESSING',
    );
    expect(done.body.status).not.toBe('PROCESSING');
  }
  // A call billed by hold and settle (chat, images) records the model it is given.
  const principal = await gw.gateway.keys.authenticate(a.secret);
  const hold = await gw.gateway.services.billing.hold(principal, 4_000_000, 'svc-chat-1');
  await gw.gateway.services.billing.settle(hold, 1_500_000);
  return { acct, a, b };
}

describe('usage history from the ledger', () => {
  test('REST and GraphQL split the same spending by day, key and model, net of refunds', async () => {
    const { acct, a, b } = await spend();
    const day = today();

    const byModel = await gw.api('GET', '/account/usage?group_by=model', { token: acct.idToken });
    expect(byModel.status).toBe(200);
    expect(byModel.body).toMatchObject({ object: 'list', to: day, groupBy: 'model' });
    expect(byModel.body.data).toEqual(
      expect.arrayContaining([
        { day, keyId: null, model: TEXT, credits: 15 },
        { day, keyId: null, model: 'svc-chat-1', credits: 1.5 },
      ]),
    );
    expect(byModel.body.data).toHaveLength(2);

    const byKey = await gw.api('GET', `/account/usage?from=${day}&to=${day}&group_by=key`, { token: acct.idToken });
    expect(byKey.body.data).toEqual(
      expect.arrayContaining([
        { day, keyId: a.id, model: null, credits: 16.5 },
        { day, keyId: b.id, model: null, credits: 0 },
      ]),
    );

    const q = await gql(`query($g: UsageGroupBy) { usage(groupBy: $g) { from to groupBy buckets { day keyId model credits } } }`, acct.idToken, { g: 'DAY' });
    expect(q.body.errors).toBeUndefined();
    expect(q.body.data.usage.groupBy).toBe('DAY');
    expect(q.body.data.usage.buckets).toEqual([{ day, keyId: null, model: null, credits: 16.5 }]);
    // The default range is the 30 days that end today.
    const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
    expect(q.body.data.usage).toMatchObject({ from, to: day });
    expect(await gw.balance(acct)).toBe(200 - 16.5);
  });

  test('a refund counts on the day of the charge it returns, with its key and model', async () => {
    const { acct, b } = await spend();
    const day = today();
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    // The failed video was charged just before midnight; its refund came after it.
    const db = gw.gateway.database.db;
    await db.run(`update ledger_entries set created_at = now() - interval '1 day' where account_id = ? and kind = 'charge' and api_key_id = ?`, [
      acct.id,
      b.id,
    ]);
    const byKey = await gw.api('GET', `/account/usage?from=${yesterday}&to=${day}&group_by=key`, { token: acct.idToken });
    expect(byKey.body.data.filter((r: { keyId: string }) => r.keyId === b.id)).toEqual([{ day: yesterday, keyId: b.id, model: null, credits: 0 }]);
    const byDay = await gw.api('GET', `/account/usage?from=${yesterday}&to=${day}`, { token: acct.idToken });
    expect(byDay.body.data).toEqual([
      { day: yesterday, keyId: null, model: null, credits: 0 },
      { day, keyId: null, model: null, credits: 16.5 },
    ]);
    // A range that starts after the charge leaves its refund out too.
    const todayOnly = await gw.api('GET', `/account/usage?from=${day}&to=${day}`, { token: acct.idToken });
    expect(todayOnly.body.data).toEqual([{ day, keyId: null, model: null, credits: 16.5 }]);
  });

  test('bad ranges answer 400 naming the field, in both doors', async () => {
    const acct = await gw.newAccount();
    const rest = (qs: string) => gw.api('GET', `/account/usage?${qs}`, { token: acct.idToken });
    expect((await rest('from=2026-13-01')).body.error).toMatchObject({ type: 'invalid_request_error', param: 'from' });
    expect((await rest('to=yesterday')).body.error.param).toBe('to');
    expect((await rest('group_by=week')).body.error.param).toBe('group_by');
    expect((await rest('from=2026-11-02&to=2026-11-01')).body.error.param).toBe('from');
    expect((await rest('from=2020-01-01&to=2026-01-01')).status).toBe(400);
    expect((await rest('colour=blue')).body.error.param).toBe('colour');
    // The ends of the calendar (the day after 9999-12-31 is past PostgreSQL's last timestamp).
    for (const [qs, param] of [
      ['from=9999-12-31&to=9999-12-31', 'from'],
      ['from=0000-01-01&to=0000-01-01', 'from'],
      ['to=0001-01-05', 'to'],
    ]) {
      const res = await rest(qs);
      expect([qs, res.status, res.body.error?.param]).toEqual([qs, 400, param]);
    }
    const early = await rest('to=1970-01-05');
    expect(early.status).toBe(200);
    expect(early.body).toMatchObject({ from: '1970-01-01', to: '1970-01-05' });
    expect((await rest('from=9999-12-01&to=9999-12-30')).status).toBe(200);

    const g = await gql(`{ usage(from: "2026-02-30") { from } }`, acct.idToken);
    expect(g.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'from' });
    const end = await gql(`{ usage(from: "9999-12-31", to: "9999-12-31") { from } }`, acct.idToken);
    expect(end.body.errors[0].extensions).toMatchObject({ code: 'invalid_request_error', param: 'from' });
    const { secret } = await gw.newKey(acct);
    const asKey = await gql(`{ usage { from } }`, secret);
    expect(asKey.body.errors[0].extensions.code).toBe('permission_error');
    expect((await gw.api('GET', '/account/usage', { token: secret })).status).toBe(401);
  });
});

describe('ledger entries', () => {
  test('paged newest first in both doors; the entries sum to the balance', async () => {
    const { acct } = await spend();
    const all: Array<{ id: string; credits: number; kind: string; model: string | null }> = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      const res: any = await gql(
        `query($after: String) { ledgerEntries(first: 3, after: $after) { nodes { id kind credits model reference keyId } pageInfo { hasNextPage endCursor } } }`,
        acct.idToken,
        { after },
      );
      expect(res.body.errors).toBeUndefined();
      all.push(...res.body.data.ledgerEntries.nodes);
      if (!res.body.data.ledgerEntries.pageInfo.hasNextPage) break;
      after = res.body.data.ledgerEntries.pageInfo.endCursor;
    }
    const ids = all.map((e) => Number(e.id));
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect(all.reduce((s, e) => s + e.credits, 0)).toBeCloseTo(await gw.balance(acct), 6);
    expect(all.find((e) => e.kind === 'REFUND')).toMatchObject({ credits: 10, model: TEXT });
    expect(
      all
        .filter((e) => e.kind === 'CHARGE')
        .map((e) => e.model)
        .sort(),
    ).toEqual([TEXT, TEXT, 'svc-chat-1']);

    const rest = await gw.api('GET', '/account/ledger-entries?first=2', { token: acct.idToken });
    expect(rest.body).toMatchObject({ object: 'list', hasMore: true, nextCursor: rest.body.data[1].id });
    expect(rest.body.data.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 2).map((e) => e.id));
    expect((await gw.api('GET', '/account/ledger-entries?first=101', { token: acct.idToken })).body.error.param).toBe('first');
    expect((await gw.api('GET', '/account/ledger-entries?after=x', { token: acct.idToken })).body.error.param).toBe('after');
    // A parameter given twice (an array to the query parser) is named, not read as NaN.
    for (const query of ['first=1&first=2', 'after=1&after=2', 'granularity=day&granularity=model']) {
      const path = query.startsWith('granularity') ? '/account/usage' : '/account/ledger-entries';
      const twice = await gw.api('GET', `${path}?${query}`, { token: acct.idToken });
      expect([twice.status, twice.body.error?.param, twice.body.error?.message]).toEqual([400, query.split('=')[0], expect.stringContaining('give it once')]);
    }
  });
});

describe('webhook delivery log in GraphQL', () => {
  test("a key's attempts, newest first; another account's key is not found", async () => {
    const acct = await gw.newAccount(50);
    const key = await gw.newKey(acct);
    const hook = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url: receiver.url } });
    receiver.verifyWith([hook.body.secret]);
    const queued = await gw.api('POST', '/v1/video/queue', { token: key.secret, body: { model: TEXT, prompt: 'waves', duration: '5s', resolution: '480p' } });
    const query = `query($k: ID!) { webhookDeliveries(keyId: $k) { eventId eventType deliveryId attempt statusCode error durationMs created } }`;
    const log = await pollUntil(
      () => gql(query, acct.idToken, { k: key.id }),
      (r) => r.body.data?.webhookDeliveries?.length > 0,
    );
    expect(log.body.data.webhookDeliveries[0]).toMatchObject({
      eventId: `wh_${queued.body.id}_completed`,
      eventType: 'video.completed',
      attempt: 1,
      statusCode: 200,
      error: null,
    });
    const rest = await gw.api('GET', `/account/api-keys/${key.id}/webhook/deliveries`, { token: acct.idToken });
    expect(rest.body.data[0].deliveryId).toBe(log.body.data.webhookDeliveries[0].deliveryId);

    const other = await gw.newAccount();
    const denied = await gql(query, other.idToken, { k: key.id });
    expect(denied.body.errors[0].extensions.code).toBe('not_found_error');
  });
});
