/**
 * SIGTERM with streams running (main.ts calls gateway.close()): a chat stream and a Responses
 * stream still open at the drain deadline each get a terminal error event the `openai` SDK
 * raises as an error, are charged exactly the prompt plus what was sent, and leave no hold or
 * credit lease open. Calls whose provider has not answered at the deadline (a plain call, a
 * stream before its first event) get a 503 `server_shutdown` and are charged nothing; a
 * Responses stream, whose 200 went out at once, gets its error event and is charged nothing.
 */
import OpenAI from 'openai';
import { pollUntil } from '../support/poll';
import { writeModelsFile } from '../support/models-file';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import { openDatabase } from '../../src/infra/db/orm';
import { FAKE_CHAT_DELTAS, startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { useTestGateway } from '../support/use-test-gateway';

let upstream: FakeOpenAIUpstream;
let silent: FakeOpenAIUpstream;
let models: ReturnType<typeof writeModelsFile>;

beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  upstream.setMode('stall-mid-stream'); // one delta, then silence: a 60-second answer in the making
  silent = await startFakeOpenAIUpstream();
  silent.setMode('hang'); // reads the request, never answers
  const chatModel = BUILTIN_CATALOG.models.find((m) => m.id === 'svc-chat-1')!;
  models = writeModelsFile({ 'svc-chat-1': { provider: 'openai-compatible', upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 60 } }, [
    { ...chatModel, id: 'svc-chat-silent', route: { provider: 'openai-compatible', upstreamModel: 'up', baseUrl: silent.url, timeoutSeconds: 60 } },
  ]);
});
// The test stops the gateway itself, so the fixture cannot read its database afterwards: the test
// checks the ledger invariants on that database, reopened after the stop.
const gw = useTestGateway(() => ({ MODELS_FILE: models.path, SHUTDOWN_DRAIN_SECONDS: '1' }), { ledgerInvariants: false });
afterAll(async () => {
  await upstream.close();
  await silent.close();
  models.remove();
});

test('streams cut by the drain deadline end with an error event, are billed what they sent, and leave no hold', async () => {
  const account = await gw.newAccount(10);
  const openai = new OpenAI({ apiKey: (await gw.newKey(account)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });

  const chat: string[] = [];
  const chatDone = (async () => {
    for await (const c of await openai.chat.completions.create({
      model: 'svc-chat-1',
      messages: [{ role: 'user', content: 'tell a long story' }],
      stream: true,
    })) {
      chat.push(c.choices[0]?.delta?.content ?? '');
    }
  })().catch((e) => e);
  const responses: string[] = [];
  const responsesDone = (async () => {
    for await (const e of await openai.responses.create({ model: 'svc-chat-1', input: 'another long story', stream: true, store: false })) {
      if (e.type === 'response.output_text.delta') responses.push(e.delta);
    }
  })().catch((e) => e);
  // Three calls of another account whose provider never answers: plain, streamed, a Responses stream.
  const quiet = await gw.newAccount(10);
  const quietKey = (await gw.newKey(quiet)).secret;
  const unanswered = [{ stream: false }, { stream: true }].map(({ stream }) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${quietKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-chat-silent', messages: [{ role: 'user', content: 'anyone there?' }], stream }),
    }).then(async (res) => ({
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: (await res.json()) as { error?: { type: string; code: string } },
    })),
  );
  const quietOpenai = new OpenAI({ apiKey: quietKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const quietResponse = (async () => {
    for await (const e of await quietOpenai.responses.create({ model: 'svc-chat-silent', input: 'hello?', stream: true, store: false })) void e;
  })().catch((e) => e);
  await pollUntil(
    async () => chat.join('') !== '' && responses.length > 0 && silent.requests.length >= 3,
    (all) => all,
    20_000,
    20,
  );

  await gw.gateway.close();
  for (const answer of await Promise.all(unanswered)) {
    expect(answer).toMatchObject({ status: 503, retryAfter: '1', body: { error: { type: 'service_unavailable', code: 'server_shutdown' } } });
  }
  const quietErr = await quietResponse;
  expect(quietErr).toBeInstanceOf(OpenAI.APIError);
  expect(quietErr.message).toContain('restarting');
  const errs = [await chatDone, await responsesDone];
  for (const err of errs) {
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(err.message).toContain('restarting');
  }
  expect(chat.join('')).toBe(FAKE_CHAT_DELTAS[0]);
  expect(responses.join('')).toBe(FAKE_CHAT_DELTAS[0]);

  const { config } = gw.gateway;
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    expect(await db.db.all(`select ref from work_items where kind = 'hold_expiry'`)).toEqual([]);
    expect(await db.db.all(`select id from credit_leases where closed_at is null`)).toEqual([]);
    const charges = await db.db.all<{ amount_micro: string }>(`select amount_micro from lease_charges where account_id = ?`, [account.id]);
    expect(charges).toHaveLength(2);
    const charged = charges.reduce((sum, c) => sum + Number(c.amount_micro), 0);
    expect(charged).toBeGreaterThan(0);
    const balance = await db.db.one<{ b: string }>(`select balance_micro as b from accounts where id = ?`, [account.id]);
    expect(Number(balance!.b)).toBe(10_000_000 - charged);
    // Nothing was sent to the quiet account's calls: nothing charged.
    const quietBalance = await db.db.one<{ b: string }>(`select balance_micro as b from accounts where id = ?`, [quiet.id]);
    expect(Number(quietBalance!.b)).toBe(10_000_000);
    await expectLedgerInvariants(db.db);
  } finally {
    await db.close();
  }
});
