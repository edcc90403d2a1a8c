/**
 * Image streams relayed from an OpenAI-compatible upstream (the fake speaks OpenAI's image event
 * wire), through the `openai` SDK as it is: the upstream's previews and image reach the client,
 * charged once at the image's price. A client that leaves before the completed event, an upstream
 * that dies, ends or errs before it, or fails before its first event, cost nothing. A stream
 * ignores an Idempotency-Key, as a chat stream does: each stream runs and is charged.
 */
import OpenAI, { toFile } from 'openai';
import { allCallsBilled } from '../support/billed';
import { FAKE_IMAGE_USAGE } from '../support/fake-openai-images';
import { makePng, startFakeOpenAIUpstream, type FakeOpenAIMode, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import type { TestAccount } from '../support/gateway-harness';
import { pngOf } from '../support/image-stream-events';
import { writeModelsFile } from '../support/models-file';
import { pollUntil } from '../support/poll';
import { useTestGateway } from '../support/use-test-gateway';

const EDIT_PRICE = 3;
let upstream: FakeOpenAIUpstream;
let models: ReturnType<typeof writeModelsFile>;
beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  const route = { provider: 'openai-compatible' as const, baseUrl: upstream.url, apiKeyEnv: 'UPSTREAM_IMG_KEY', timeoutSeconds: 5 };
  models = writeModelsFile({ 'svc-creative-v7': { ...route, upstreamModel: 'up-v7' } }, [
    {
      id: 'up-image-edit',
      group: 'image-edit',
      ownedBy: 'svc',
      description: 'An edit model served upstream',
      creditsPerImage: EDIT_PRICE,
      route: { ...route, upstreamModel: 'up-edit' },
      retry: { attempts: 1, budgetSeconds: 30 },
    },
  ]);
});
const gw = useTestGateway(() => ({ MODELS_FILE: models.path, UPSTREAM_IMG_KEY: 'sk-img-upstream-1234' }));
afterAll(async () => {
  await upstream.close();
  models.remove();
});
afterEach(() => upstream.setMode('ok'));

async function liveClient(credits = 20): Promise<{ acct: TestAccount; openai: OpenAI; secret: string }> {
  const acct = await gw.newAccount(credits);
  const { secret } = await gw.newKey(acct);
  return { acct, secret, openai: new OpenAI({ apiKey: secret, baseURL: `${gw.url}/v1`, maxRetries: 0 }) };
}

const generate = (openai: OpenAI, partialImages: number, options?: OpenAI.RequestOptions) =>
  openai.images.generate({ model: 'svc-creative-v7', prompt: 'a lighthouse', size: '64x64', stream: true, partial_images: partialImages }, options);
const edit = async (openai: OpenAI, partialImages: number, options?: OpenAI.RequestOptions) =>
  openai.images.edit(
    {
      model: 'up-image-edit',
      image: await toFile(makePng(64, 64), 'in.png', { type: 'image/png' }),
      prompt: 'blue',
      size: '64x64',
      stream: true,
      partial_images: partialImages,
    },
    options,
  );
const kinds = [
  ['generation', 'image_generation', generate, 1],
  ['edit', 'image_edit', edit, EDIT_PRICE],
] as const;

describe.each(kinds)('a streamed %s', (_name, kind, call, price) => {
  test("relays the upstream's previews and image, and is charged once", async () => {
    const { acct, openai } = await liveClient();
    upstream.requests.length = 0;
    const events: any[] = [];
    for await (const event of await call(openai, 2)) events.push(event);
    expect(events.map((e) => e.type)).toEqual([`${kind}.partial_image`, `${kind}.partial_image`, `${kind}.completed`]);
    for (const e of events) expect(pngOf(e.b64_json)).toMatchObject({ width: 64, height: 64, colours: 1 });
    expect(events.map((e) => e.partial_image_index)).toEqual([0, 1, undefined]);
    expect(events.at(-1)).toMatchObject({ usage: FAKE_IMAGE_USAGE, quality: 'low', background: 'opaque', size: '64x64', output_format: 'png' });
    const sent = upstream.requests[0];
    if (sent.json) expect(sent.json).toMatchObject({ model: 'up-v7', stream: true, partial_images: 2 });
    else
      expect(Object.fromEntries(sent.parts!.filter((p) => !p.filename).map((p) => [p.name, p.data.toString()]))).toMatchObject({
        stream: 'true',
        partial_images: '2',
      });
    await allCallsBilled(gw, acct.id);
    expect(await gw.balance(acct)).toBeCloseTo(20 - price, 6);
  });

  test('from an upstream that ignores `stream`: its image as the completed event, charged once', async () => {
    const { acct, openai } = await liveClient();
    upstream.setMode('ignore-stream');
    const events: any[] = [];
    for await (const event of await call(openai, 2)) events.push(event);
    expect(events.map((e) => e.type)).toEqual([`${kind}.completed`]);
    expect(pngOf(events[0].b64_json)).toMatchObject({ width: 64, height: 64 });
    await allCallsBilled(gw, acct.id);
    expect(await gw.balance(acct)).toBeCloseTo(20 - price, 6);
  });

  test('whose client leaves before the completed event costs nothing', async () => {
    const { acct, openai } = await liveClient();
    upstream.setMode('held-stream');
    const seen: string[] = [];
    for await (const event of await call(openai, 2)) {
      seen.push(event.type);
      break;
    }
    expect(seen).toEqual([`${kind}.partial_image`]);
    // Settled with the client's departure, while the upstream still holds the image back.
    await allCallsBilled(gw, acct.id);
    upstream.releaseHeld();
    expect(await gw.balance(acct)).toBe(20);
  });

  test.each(['die-mid-stream', 'stream-error-event', 'stream-without-done'] as FakeOpenAIMode[])(
    'whose upstream fails after a preview (%s) ends in an upstream_error event and costs nothing',
    async (mode) => {
      const { acct, openai } = await liveClient();
      upstream.setMode(mode);
      const seen: string[] = [];
      const err = await (async () => {
        for await (const event of await call(openai, 2)) seen.push(event.type);
      })().catch((e: unknown) => e);
      expect(seen[0]).toBe(`${kind}.partial_image`);
      expect(seen).not.toContain(`${kind}.completed`);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as InstanceType<typeof OpenAI.APIError>).type).toBe('upstream_error');
      await allCallsBilled(gw, acct.id);
      expect(await gw.balance(acct)).toBe(20);
    },
  );

  test('whose upstream fails before its first event is a plain 502, and costs nothing', async () => {
    const { acct, openai } = await liveClient();
    upstream.setMode('error-500');
    const err = await call(openai, 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect(await gw.balance(acct)).toBe(20);
  });

  test('ignores an Idempotency-Key: each stream runs and is charged', async () => {
    const { acct, openai } = await liveClient();
    upstream.requests.length = 0;
    const headers = { 'Idempotency-Key': `stream-${kind}` };
    for (let i = 0; i < 2; i++) {
      const events: any[] = [];
      for await (const event of await call(openai, 0, { headers })) events.push(event);
      expect(events.map((e) => e.type)).toEqual([`${kind}.completed`]);
    }
    // Not replayed: the second stream reached the upstream too.
    expect(upstream.requests).toHaveLength(2);
    await allCallsBilled(gw, acct.id);
    expect(await gw.balance(acct)).toBeCloseTo(20 - 2 * price, 6);
  });
});

test('a client that leaves before the first event costs nothing', async () => {
  const { acct, secret } = await liveClient();
  upstream.setMode('hang');
  const before = upstream.requests.length;
  const abort = new AbortController();
  const answer = fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'svc-creative-v7', prompt: 'left early', size: '64x64', stream: true, partial_images: 1 }),
    signal: abort.signal,
  }).catch(() => 'gave up');
  await pollUntil(
    async () => upstream.requests.length,
    (n) => n > before,
    10_000,
    10,
  );
  abort.abort();
  expect(await answer).toBe('gave up');
  await allCallsBilled(gw, acct.id);
  expect(await gw.balance(acct)).toBe(20);
});
