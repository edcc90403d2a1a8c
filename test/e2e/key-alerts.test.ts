/**
 * A key's alerts as a customer's receiver gets them on the account webhook: `key.budget_threshold`
 * once per crossing of 80% and of 100% of a budget in a period, and again in the next period;
 * `key.expiring` 7 days and 1 day before the key's `expiresAt`, none stale after the expiry was
 * changed, cleared or the key revoked. The gateway keeps time on a fake clock; the database's
 * clock cannot be stepped, so a due time is brought forward by SQL as that clock would pass it,
 * and a new period is made by moving the past one back.
 */
import { periodEnd } from '../../src/domain/credits/budgets';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { startWebhookReceiver, type ReceivedEvent } from '../support/webhook-receiver';
import { fakeClock } from '../support/fake-clock';
import { pollUntil } from '../support/poll';

let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
// Registered before the gateway's fixture, so the receiver closes before the gateway.
afterAll(async () => {
  await receiver.close();
});
const clock = fakeClock();
const gw = useTestGateway({ WEBHOOK_ALLOW_LOCAL: '1', WEBHOOK_RETRY_DELAYS: '60,120' }, { clock });
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
beforeEach(() => {
  receiver.failNextRequests(0);
});

/** The worker's longest pause between claims (services.ts); LEASE_IDLE_SECONDS, after which an unused lease goes back. */
const WORKER_IDLE_MS = 500;
const LEASE_IDLE_MS = 30_000;
const DAY_MS = 86_400_000;
const db = () => gw.gateway.database.db;

async function accountWithWebhook() {
  const acct = await gw.newAccount(100);
  const set = await gw.api('PATCH', '/account/webhook', { token: acct.idToken, body: { url: receiver.url } });
  receiver.verifyWith([set.body.secret]);
  return acct;
}

/** The account's work still to do: deliveries and key notices, with when they are due. */
const pending = async (acct: TestAccount) =>
  db().all<{ kind: string; ref: string }>(
    `select kind, ref from work_items
      where (kind = 'webhook_delivery' and payload->>'accountId' = ?) or (kind = 'key_expiring' and payload->>'accountId' = ? and due_at <= now())
      order by id`,
    [acct.id, acct.id],
  );

/** Steps the worker's clock until the account has nothing due left; answers the events its receiver got of `type`, oldest first. */
async function deliverAll(acct: TestAccount, type: string): Promise<ReceivedEvent[]> {
  await pollUntil(
    async () => (await clock.tickAsync(WORKER_IDLE_MS), (await pending(acct)).length),
    (n) => n === 0,
  );
  return receiver.received.filter((e) => e.body.type === type && e.body.data.keyId && keyAccounts.get(e.body.data.keyId) === acct.id);
}
const keyAccounts = new Map<string, string>();

async function newKey(acct: TestAccount, body: Record<string, unknown>) {
  const key = await gw.newKey(acct, body);
  keyAccounts.set(key.id, acct.id);
  return key;
}

describe('key.budget_threshold', () => {
  /** One image of a creative model: 1 credit. */
  const image = (secret: string) =>
    gw.api('POST', '/v1/images/generations', { token: secret, body: { model: 'svc-creative-v8', prompt: 'a lighthouse', size: '1024x1024' } });

  /** Images until the day's budget refuses one; answers how many were served. */
  async function spendTheDay(secret: string): Promise<number> {
    for (let served = 0; served < 20; served++) {
      const res = await image(secret);
      if (res.status === 429) {
        expect(res.body.error.type).toBe('daily_cap_exceeded');
        return served;
      }
      expect(res.status).toBe(200);
    }
    throw new Error('the budget never refused');
  }

  /**
   * The next day, as far as the key can tell: its leases gone back (idle), then its spend, its
   * leases and what was told of them moved a day back, each event keeping the id its occurrence
   * makes (svc_account_event), as if all of it had happened yesterday.
   */
  async function aDayLater(keyId: string): Promise<void> {
    await pollUntil(
      async () => (
        await clock.tickAsync(LEASE_IDLE_MS),
        (await db().one<{ n: number }>(`select count(*)::int as n from credit_leases where api_key_id = ? and closed_at is null`, [keyId]))!.n
      ),
      (n) => n === 0,
    );
    await db().run(`update key_daily_spend set day = day - 1 where api_key_id = ?`, [keyId]);
    await db().run(`update credit_leases set day = day - 1 where api_key_id = ?`, [keyId]);
    await db().run(`update key_budget_notices set starts = starts - 1 where api_key_id = ? and period = 'day'`, [keyId]);
    await db().run(
      `with moved as (
         select id as old, concat_ws('/', split_part(occurrence, '/', 1), 'day', to_char(split_part(occurrence, '/', 3)::date - 1, 'YYYY-MM-DD'),
                                     split_part(occurrence, '/', 4)) as occurrence
           from account_events where type = 'key.budget_threshold' and data->>'keyId' = ?)
       update account_events e set occurrence = m.occurrence, id = 'evt_' || md5(e.account_id || '/' || e.type || '/' || m.occurrence)
         from moved m where e.id = m.old`,
      [keyId],
    );
  }

  test("80% and 100% of the day's budget are sent once each, signed, with a stable id; the next day's crossings again", async () => {
    const acct = await accountWithWebhook();
    const key = await newKey(acct, { budgets: [{ period: 'day', credits: 5 }] });
    // The first delivery fails: its retry carries the same id and bytes.
    receiver.failNextRequests(1);
    expect(await spendTheDay(key.secret)).toBe(5);
    // The retry waits WEBHOOK_RETRY_DELAYS' first delay on the database's clock: brought forward.
    const [retry] = await pollUntil(
      async () => (
        await clock.tickAsync(WORKER_IDLE_MS),
        db().all<{ ref: string }>(`select ref from work_items where kind = 'webhook_delivery' and payload->>'accountId' = ? and payload->>'attempt' = '2'`, [
          acct.id,
        ])
      ),
      (rows) => rows.length === 1,
    );
    const [failed] = receiver.received.filter((e) => e.body.data?.keyId === key.id);
    await db().run(`update work_items set due_at = now() where kind = 'webhook_delivery' and ref = ?`, [retry.ref]);
    const sent = await deliverAll(acct, 'key.budget_threshold');
    const resetsAt = periodEnd('day', new Date((await db().one<{ now: Date }>(`select now() as now`))!.now)).toISOString();
    const ids = [...new Set(sent.map((e) => e.body.id))];
    expect(ids).toHaveLength(2);
    expect(sent.filter((e) => e.body.id === failed.body.id).map((e) => e.raw)).toEqual([failed.raw, failed.raw]);
    const told = ids.map((id) => sent.find((e) => e.body.id === id)!).sort((a, b) => a.body.data.percent - b.body.data.percent);
    expect(told.map((e) => e.body)).toEqual([
      {
        id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        type: 'key.budget_threshold',
        created: expect.any(Number),
        data: { keyId: key.id, period: 'day', percent: 80, credits: 5, spent: expect.any(Number), resetsAt },
      },
      {
        id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        type: 'key.budget_threshold',
        created: expect.any(Number),
        data: { keyId: key.id, period: 'day', percent: 100, credits: 5, spent: 5, resetsAt },
      },
    ]);
    expect(told[0].body.data.spent).toBeGreaterThanOrEqual(4);
    expect(told[0].body.data.spent).toBeLessThanOrEqual(5);
    expect(told.map((e) => e.headers['x-svc-event'])).toEqual(['key.budget_threshold', 'key.budget_threshold']);
    expect(told.every((e) => e.verifiedWith !== null)).toBe(true);

    // Refused calls, and the leases' return, tell nothing more.
    expect((await image(key.secret)).status).toBe(429);
    await aDayLater(key.id);
    expect(await deliverAll(acct, 'key.budget_threshold')).toHaveLength(sent.length);

    receiver.received.length = 0;
    expect(await spendTheDay(key.secret)).toBe(5);
    const next = await deliverAll(acct, 'key.budget_threshold');
    expect(next.map((e) => e.body.data.percent).sort()).toEqual([100, 80]);
    // Yesterday's two and today's two, each once; today's are the ones sent.
    const recorded = await db().all<{ id: string; occurrence: string }>(
      `select id, occurrence from account_events where type = 'key.budget_threshold' and data->>'keyId' = ? order by occurrence`,
      [key.id],
    );
    const daysBefore = (n: number) => new Date(new Date(resetsAt).getTime() - n * DAY_MS).toISOString().slice(0, 10);
    const [yesterday, today] = [daysBefore(2), daysBefore(1)];
    expect(recorded.map((r) => r.occurrence)).toEqual([
      `${key.id}/day/${yesterday}/100`,
      `${key.id}/day/${yesterday}/80`,
      `${key.id}/day/${today}/100`,
      `${key.id}/day/${today}/80`,
    ]);
    expect(next.map((e) => e.body.id).sort()).toEqual(
      recorded
        .slice(2)
        .map((r) => r.id)
        .sort(),
    );
  });

  test("a week's budget crossed by a video's charge, straight from the balance, is told with the week's end", async () => {
    const acct = await accountWithWebhook();
    const key = await newKey(acct, { budgets: [{ period: 'week', credits: 12 }] });
    const queued = await gw.api('POST', '/v1/video/queue', {
      token: key.secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'a lighthouse at dusk', duration: '5s', resolution: '480p' },
    });
    expect(queued.status).toBe(200);
    const sent = await deliverAll(acct, 'key.budget_threshold');
    const now = new Date((await db().one<{ now: Date }>(`select now() as now`))!.now);
    expect(sent.map((e) => e.body.data)).toEqual([
      { keyId: key.id, period: 'week', percent: 80, credits: 12, spent: 10, resetsAt: periodEnd('week', now).toISOString() },
    ]);
  });
});

describe('key.expiring', () => {
  /** The key's notices still to come: days before the expiry they were written for, and the expiry. */
  const noticesOf = async (keyId: string) =>
    (
      await db().all<{ days: string; expires_at: string; due_in: string }>(
        `select payload->>'days' as days, payload->>'expiresAt' as expires_at, extract(epoch from due_at - now()) as due_in
           from work_items where kind = 'key_expiring' and payload->>'keyId' = ? order by due_at`,
        [keyId],
      )
    ).map((r) => ({ days: Number(r.days), expiresAt: r.expires_at, dueInDays: Math.round(Number(r.due_in) / 8640) / 10 }));
  /** The key's notices come due, as the database's clock would bring them. */
  const bringDue = (keyId: string, days?: number) =>
    db().run(`update work_items set due_at = now() where kind = 'key_expiring' and payload->>'keyId' = ? and (?::int is null or payload->>'days' = ?::text)`, [
      keyId,
      days ?? null,
      days ?? null,
    ]);
  const inDays = (days: number) => new Date(clock.now() + days * DAY_MS).toISOString();

  test('7 days and 1 day before expiresAt, each sent once with the key and its expiry; set again, nothing twice', async () => {
    const acct = await accountWithWebhook();
    const expiresAt = inDays(10);
    const key = await newKey(acct, { name: 'deploy key', expiresAt });
    const shown = new Date(expiresAt).toISOString();
    expect(await noticesOf(key.id)).toEqual([
      { days: 7, expiresAt: shown, dueInDays: 3 },
      { days: 1, expiresAt: shown, dueInDays: 9 },
    ]);
    await bringDue(key.id, 7);
    const [seven] = await deliverAll(acct, 'key.expiring');
    expect(seven.body).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'key.expiring',
      created: expect.any(Number),
      data: { keyId: key.id, name: 'deploy key', expiresAt: shown, days: 7 },
    });
    expect(seven.headers['x-svc-event']).toBe('key.expiring');
    // The same expiresAt sent again writes the notices again; the one told already is not told twice.
    const again = await gw.api('PATCH', `/account/api-keys/${key.id}`, { token: acct.idToken, body: { expiresAt } });
    expect(again.body.expiresAt).toBe(shown);
    await bringDue(key.id);
    const both = await deliverAll(acct, 'key.expiring');
    expect(both.map((e) => [e.body.data.days, e.body.id === seven.body.id]).sort()).toEqual([
      [1, false],
      [7, true],
    ]);
    expect(await noticesOf(key.id)).toEqual([]);
  });

  test('a key created 3 days from its expiry gets the 1-day notice alone; 12 hours from it, none', async () => {
    const acct = await accountWithWebhook();
    const soon = await newKey(acct, { expiresAt: inDays(3) });
    expect((await noticesOf(soon.id)).map((n) => [n.days, n.dueInDays])).toEqual([[1, 2]]);
    const sooner = await newKey(acct, { expiresAt: inDays(0.5) });
    expect(await noticesOf(sooner.id)).toEqual([]);
  });

  test('a changed, cleared or revoked expiry sends no stale notice; the changed one sends its own, over GraphQL too', async () => {
    const acct = await accountWithWebhook();
    const changed = await newKey(acct, { expiresAt: inDays(10) });
    const later = inDays(20);
    const res = await gw.api('POST', '/graphql', {
      token: acct.idToken,
      body: {
        query: 'mutation($id: ID!, $at: DateTime) { updateApiKey(id: $id, input: { expiresAt: $at }) { expiresAt } }',
        variables: { id: changed.id, at: later },
      },
    });
    expect(res.body.data.updateApiKey.expiresAt).toBe(new Date(later).toISOString());
    expect((await noticesOf(changed.id)).map((n) => [n.days, n.expiresAt === new Date(later).toISOString()])).toEqual([
      [7, false],
      [1, false],
      [7, true],
      [1, true],
    ]);
    const cleared = await newKey(acct, { expiresAt: inDays(10) });
    expect((await gw.api('PATCH', `/account/api-keys/${cleared.id}`, { token: acct.idToken, body: { expiresAt: null } })).body.expiresAt).toBeNull();
    const revoked = await newKey(acct, { expiresAt: inDays(10) });
    expect((await gw.api('DELETE', `/account/api-keys/${revoked.id}`, { token: acct.idToken })).status).toBe(200);
    for (const k of [changed, cleared, revoked]) await bringDue(k.id);
    const sent = await deliverAll(acct, 'key.expiring');
    expect(sent.map((e) => [e.body.data.keyId, e.body.data.expiresAt, e.body.data.days]).sort()).toEqual([
      [changed.id, new Date(later).toISOString(), 1],
      [changed.id, new Date(later).toISOString(), 7],
    ]);
    for (const k of [changed, cleared, revoked]) expect(await noticesOf(k.id)).toEqual([]);
  });
});
