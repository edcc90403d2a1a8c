/**
 * The edges of billing, through the gateway with the openai SDK: usage far above the hold is
 * charged (as far as the balance goes, the rest recorded as uncollected, never a negative
 * balance), `x-svc-credits` is what the balance moved, and a call refused before its upstream is
 * reached leaves nothing reserved.
 */
import OpenAI from 'openai';
import { writeModelsFile } from '../support/models-file';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { useTestGateway } from '../support/use-test-gateway';
import { allCallsBilled } from '../support/billed';

let upstream: FakeOpenAIUpstream;
let models: ReturnType<typeof writeModelsFile>;

beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  const route = { provider: 'openai-compatible' as const, upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 5 };
  models = writeModelsFile({ 'svc-chat-1': route });
});
const gw = useTestGateway(() => ({ MODELS_FILE: models.path }));
afterAll(async () => {
  await upstream.close();
  models.remove();
});

const settled = (accountId: string) => allCallsBilled(gw, accountId);

test('usage far above the hold is charged as far as the balance goes; the rest is uncollected; x-svc-credits is what moved', async () => {
  upstream.setMode('huge-usage'); // 1.61 credits of usage for a hold of about 0.01
  const acct = await gw.newAccount(1);
  const openai = new OpenAI({ apiKey: (await gw.newKey(acct)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const { data, response } = await openai.chat.completions
    .create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 })
    .withResponse();
  expect(data.usage?.total_tokens).toBe(16_100);
  expect(Number(response.headers.get('x-svc-credits'))).toBe(1);
  expect(await gw.balance(acct)).toBe(0);
  const uncollected = await gw.gateway.database.db.one<{ amount_micro: string }>(`select amount_micro from uncollected_charges where account_id = ?`, [
    acct.id,
  ]);
  expect(Number(uncollected!.amount_micro)).toBe(610_000);
  upstream.setMode('ok');
});

test('usage no call could have used (1e15 tokens) is charged within what the call allowed, not drained from the account', async () => {
  upstream.setMode('absurd-usage');
  const acct = await gw.newAccount(50);
  const openai = new OpenAI({ apiKey: (await gw.newKey(acct)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const { data, response } = await openai.chat.completions
    .create({ model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 })
    .withResponse();
  // What the call allowed: max_tokens 100 x n 1; a 'hi' prompt is allowed 4 x its estimate + 16,384.
  expect(data.usage!.completion_tokens).toBe(100);
  expect(data.usage!.prompt_tokens).toBeLessThan(16_500);
  const charged = Number(response.headers.get('x-svc-credits'));
  expect(charged).toBeCloseTo((data.usage!.prompt_tokens + data.usage!.completion_tokens) / 10_000, 6);
  expect(await gw.balance(acct)).toBeCloseTo(50 - charged, 6);
  expect(await gw.gateway.database.db.all(`select 1 from uncollected_charges where account_id = ?`, [acct.id])).toEqual([]);
  upstream.setMode('ok');
});

test.each([false, true])('negative usage (stream: %s) is charged as if none were reported: the prompt estimate and what was relayed', async (stream) => {
  upstream.setMode('negative-usage');
  const acct = await gw.newAccount(5);
  const openai = new OpenAI({ apiKey: (await gw.newKey(acct)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const body = { model: 'svc-chat-1', messages: [{ role: 'user' as const, content: 'hi' }], max_tokens: 100 };
  let usage: OpenAI.CompletionUsage | undefined;
  if (stream) {
    for await (const chunk of await openai.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }))
      usage = chunk.usage ?? usage;
  } else {
    usage = (await openai.chat.completions.create(body)).usage;
  }
  expect(usage!.prompt_tokens).toBeGreaterThan(0);
  expect(usage!.completion_tokens).toBeGreaterThan(0);
  await settled(acct.id);
  expect(await gw.balance(acct)).toBeCloseTo(5 - (usage!.prompt_tokens + usage!.completion_tokens) / 10_000, 6);
  upstream.setMode('ok');
});

test('across many calls, the sum of x-svc-credits is exactly what the balance moved', async () => {
  const acct = await gw.newAccount(50);
  const openai = new OpenAI({ apiKey: (await gw.newKey(acct)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  let reported = 0;
  await Promise.all(
    Array.from({ length: 30 }, async (_, i) => {
      const { response } = await openai.chat.completions
        .create({ model: 'svc-chat-1', messages: [{ role: 'user', content: `call ${i}` }], max_tokens: 50 })
        .withResponse();
      reported += Math.round(Number(response.headers.get('x-svc-credits')) * 1e6);
    }),
  );
  await settled(acct.id);
  expect(reported).toBeGreaterThan(0);
  expect(Math.round((50 - (await gw.balance(acct))) * 1e6)).toBe(reported);
});

test("concurrent calls each far above their hold stop at the key's daily cap: x-svc-credits is what moved, the rest uncollected", async () => {
  upstream.setMode('huge-usage'); // 1.61 credits of usage each, for holds of about 0.01
  const acct = await gw.newAccount(50);
  const key = await gw.newKey(acct, { dailySpendCap: 2 });
  const openai = new OpenAI({ apiKey: key.secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  let reported = 0;
  const statuses = await Promise.all(
    Array.from({ length: 12 }, async (_, i) => {
      try {
        const { response } = await openai.chat.completions
          .create({ model: 'svc-chat-1', messages: [{ role: 'user', content: `call ${i}` }], max_tokens: 100 })
          .withResponse();
        reported += Math.round(Number(response.headers.get('x-svc-credits')) * 1e6);
        return response.status;
      } catch (err) {
        // A 402 is the short, retryable refusal of a call whose credits other calls of the key
        // hold for the moment (its lease taken and taken again by them); it must say when to retry.
        const e = err as { status?: number; headers?: Headers };
        return e.status === 402 ? `402 retry-after ${e.headers?.get('retry-after')}` : e.status;
      }
    }),
  );
  await settled(acct.id);
  upstream.setMode('ok');
  // Every call admitted before the cap filled was answered; the cap refused the others (429), or
  // they were told to retry in a second while the calls before them held the key's credits.
  expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(1);
  expect(statuses.filter((s) => s !== 200 && s !== 429 && s !== '402 retry-after 1')).toEqual([]);
  const db = gw.gateway.database.db;
  const spent = await db.one<{ s: string }>(`select sum(spent_micro)::text as s from key_daily_spend where api_key_id = ?`, [key.id]);
  expect(Number(spent!.s)).toBeLessThanOrEqual(2_000_000);
  expect(Math.round((50 - (await gw.balance(acct))) * 1e6)).toBe(reported);
  expect(reported).toBeLessThanOrEqual(2_000_000);
  const waived = await db.all<{ reason: string }>(`select reason from uncollected_charges where account_id = ?`, [acct.id]);
  expect(waived.length).toBeGreaterThan(0);
  expect(new Set(waived.map((w) => w.reason))).toEqual(new Set(['daily_cap']));
});

test('a stream whose first line never ends is a 502 upstream_error, nothing charged', async () => {
  upstream.setMode('endless-line');
  const acct = await gw.newAccount(10);
  const key = await gw.newKey(acct);
  const res = await gw.api('POST', '/v1/chat/completions', {
    token: key.secret,
    body: { model: 'svc-chat-1', messages: [{ role: 'user', content: 'hi' }], stream: true },
  });
  upstream.setMode('ok');
  expect([res.status, res.body.error?.type]).toEqual([502, 'upstream_error']);
  await settled(acct.id);
  expect(await gw.balance(acct)).toBe(10);
});
