/**
 * SIGTERM with an image stream running (main.ts calls gateway.close()): a stream that has sent
 * its previews but not its image at the drain deadline ends with an error event the `openai` SDK
 * raises, saying nothing was charged, and nothing is; no hold or credit lease is left open.
 */
import OpenAI from 'openai';
import { openDatabase } from '../../src/infra/db/orm';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { writeModelsFile } from '../support/models-file';
import { pollUntil } from '../support/poll';
import { useTestGateway } from '../support/use-test-gateway';

let upstream: FakeOpenAIUpstream;
let models: ReturnType<typeof writeModelsFile>;
beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  upstream.setMode('held-stream'); // the previews, then the image held back: a long image in the making
  models = writeModelsFile({ 'svc-creative-v7': { provider: 'openai-compatible', upstreamModel: 'up', baseUrl: upstream.url, timeoutSeconds: 60 } });
});
// The test stops the gateway itself: it checks the ledger on the database, reopened after the stop.
const gw = useTestGateway(() => ({ MODELS_FILE: models.path, SHUTDOWN_DRAIN_SECONDS: '1' }), { ledgerInvariants: false });
afterAll(async () => {
  upstream.releaseHeld();
  await upstream.close();
  models.remove();
});

test('an image stream cut by the drain deadline ends with an error event and is charged nothing', async () => {
  const account = await gw.newAccount(10);
  const openai = new OpenAI({ apiKey: (await gw.newKey(account)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const seen: string[] = [];
  const done = (async () => {
    for await (const e of await openai.images.generate({
      model: 'svc-creative-v7',
      prompt: 'a slow lighthouse',
      size: '64x64',
      stream: true,
      partial_images: 2,
    })) {
      seen.push(e.type);
    }
  })().catch((e: unknown) => e);
  await pollUntil(
    async () => seen.length,
    (n) => n === 2,
    20_000,
    20,
  );

  await gw.gateway.close();
  const err = await done;
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect(err).toMatchObject({ code: 'server_shutdown', message: expect.stringContaining('nothing was charged') });
  expect(seen).toEqual(['image_generation.partial_image', 'image_generation.partial_image']);

  const { config } = gw.gateway;
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    expect(await db.db.all(`select id from credit_leases where closed_at is null`)).toEqual([]);
    expect(await db.db.all(`select amount_micro from lease_charges where account_id = ?`, [account.id])).toEqual([]);
    const balance = await db.db.one<{ b: string }>(`select balance_micro as b from accounts where id = ?`, [account.id]);
    expect(Number(balance!.b)).toBe(10_000_000);
    await expectLedgerInvariants(db.db);
  } finally {
    await db.close();
  }
});
