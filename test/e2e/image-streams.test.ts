/**
 * Image streams on the simulator, through the `openai` SDK as it is: `images.generate` and
 * `images.edit` with `stream: true` and `partial_images` 0 to 3 answer OpenAI's events, each
 * partial image a real PNG of the image's size, coarse first and finer after; the completed
 * event carries the image and a usage. Each stream is charged once, the unstreamed price, and
 * a refused request (a field out of bounds or that cannot be streamed) nothing, naming the field.
 */
import OpenAI, { toFile } from 'openai';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import { allCallsBilled } from '../support/billed';
import { makePng } from '../support/fake-openai-upstream';
import type { TestAccount } from '../support/gateway-harness';
import { distance, eventsOf, pngOf } from '../support/image-stream-events';
import { checkExchange } from '../support/openapi-check';
import { useTestGateway } from '../support/use-test-gateway';

const gw = useTestGateway();
let acct: TestAccount;
let key: { id: string; secret: string };
let openai: OpenAI;
beforeAll(async () => {
  acct = await gw.newAccount(100);
  key = await gw.newKey(acct);
  openai = new OpenAI({ apiKey: key.secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});

const priceOf = (id: string) => (BUILTIN_CATALOG.models.find((m) => m.id === id) as { creditsPerImage: number }).creditsPerImage;

/** Runs `call` and answers what it cost the account, once every call of it is billed. */
async function charged(call: () => Promise<void>): Promise<number> {
  const before = await gw.balance(acct);
  await call();
  await allCallsBilled(gw, acct.id);
  return before - (await gw.balance(acct));
}

describe.each([0, 1, 2, 3])('partial_images %i', (partialImages) => {
  test('a generation streams its previews, coarse to fine, then the image, charged once', async () => {
    const events: any[] = [];
    const cost = await charged(async () => {
      const stream = await openai.images.generate({
        model: 'svc-creative-v8',
        prompt: 'a lighthouse',
        size: '128x96',
        stream: true,
        partial_images: partialImages,
      });
      for await (const event of stream) events.push(event);
    });
    expect(events.map((e) => e.type)).toEqual([...Array(partialImages).fill('image_generation.partial_image'), 'image_generation.completed']);
    const pngs = events.map((e) => pngOf(e.b64_json));
    for (const png of pngs) expect(png).toMatchObject({ width: 128, height: 96 });
    const image = pngs.at(-1)!.pixels;
    // The first preview is the image in blocks of 32x32 pixels (4x3 of them), at most one colour each.
    if (partialImages > 0) expect(pngs[0].colours).toBeLessThanOrEqual(12);
    // Each preview is nearer the image than the one before it.
    const away = pngs.slice(0, -1).map((p) => distance(p.pixels, image));
    for (let i = 1; i < away.length; i++) expect(away[i]).toBeLessThan(away[i - 1]);
    for (const d of away) expect(d).toBeGreaterThan(0);
    events
      .slice(0, -1)
      .forEach((e, i) => expect(e).toMatchObject({ partial_image_index: i, size: '128x96', output_format: 'png', background: 'auto', quality: 'auto' }));
    const completed = events.at(-1);
    expect(completed).toMatchObject({ size: '128x96', output_format: 'png', created_at: expect.any(Number) });
    expect(completed.usage).toMatchObject({ input_tokens: expect.any(Number), output_tokens: expect.any(Number), total_tokens: expect.any(Number) });
    expect(completed.usage.total_tokens).toBeGreaterThan(0);
    expect(cost).toBeCloseTo(priceOf('svc-creative-v8'), 6);
  });

  test('an edit streams image_edit events of the input image, charged once', async () => {
    const events: any[] = [];
    const cost = await charged(async () => {
      const image = await toFile(makePng(80, 64), 'in.png', { type: 'image/png' });
      const stream = await openai.images.edit({ model: 'svc-image-edit-1', image, prompt: 'make it blue', stream: true, partial_images: partialImages });
      for await (const event of stream) events.push(event);
    });
    expect(events.map((e) => e.type)).toEqual([...Array(partialImages).fill('image_edit.partial_image'), 'image_edit.completed']);
    for (const e of events) expect(pngOf(e.b64_json)).toMatchObject({ width: 80, height: 64 });
    expect(events.at(-1).usage.input_tokens_details.image_tokens).toBeGreaterThan(0);
    expect(cost).toBeCloseTo(priceOf('svc-image-edit-1'), 6);
  });
});

test('a streamed image is the image the same call makes unstreamed', async () => {
  const ask = { model: 'svc-creative-v8', prompt: 'the same lighthouse', size: '64x64' as const, seed: 7 };
  const plain = await openai.images.generate({ ...ask, response_format: 'b64_json' });
  const events: any[] = [];
  for await (const event of await openai.images.generate({ ...ask, stream: true, partial_images: 1 })) events.push(event);
  expect(events.at(-1).b64_json).toBe(plain.data![0].b64_json);
});

test('the event stream is the one docs/openapi.yaml describes, for generations and edits', async () => {
  const gen = await gw.api('POST', '/v1/images/generations', {
    token: key.secret,
    body: { model: 'svc-creative-v8', prompt: 'checked', size: '64x64', stream: true, partial_images: 2 },
  });
  expect(gen.status).toBe(200);
  expect(gen.headers.get('content-type')).toMatch(/^text\/event-stream/);
  expect(eventsOf(gen.body).map((e) => e.name)).toEqual(['image_generation.partial_image', 'image_generation.partial_image', 'image_generation.completed']);

  const boundary = 'StreamedEdit';
  const text = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const body = Buffer.concat([
    Buffer.from(text('prompt', 'a hat') + text('stream', 'true') + text('partial_images', '1')),
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="in.png"\r\nContent-Type: image/png\r\n\r\n`),
    makePng(64, 64),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const requestHeaders = { authorization: `Bearer ${key.secret}`, 'content-type': `multipart/form-data; boundary=${boundary}` };
  const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: requestHeaders, body });
  const answer = await res.text();
  checkExchange({
    method: 'POST',
    target: '/v1/images/edits',
    requestHeaders,
    requestBody: body.toString('latin1'),
    status: res.status,
    responseHeaders: res.headers,
    responseBody: answer,
  });
  expect(eventsOf(answer).map((e) => e.name)).toEqual(['image_edit.partial_image', 'image_edit.completed']);
});

describe('refused, charging nothing, naming the field', () => {
  test.each([
    [{ partial_images: 4 }, 'partial_images'],
    [{ partial_images: -1 }, 'partial_images'],
    [{ partial_images: 1.5 }, 'partial_images'],
    [{ partial_images: '2' }, 'partial_images'],
    [{ stream: false, partial_images: 2 }, 'partial_images'],
    [{ partial_images: 1, stream: undefined }, 'partial_images'],
    [{ n: 2 }, 'n'],
    [{ response_format: 'url' }, 'response_format'],
    [{ stream: 'true' }, 'stream'],
  ])('a generation with %j', async (fields, param) => {
    const cost = await charged(async () => {
      const res = await gw.api('POST', '/v1/images/generations', {
        token: key.secret,
        body: { model: 'svc-creative-v8', prompt: 'x', size: '64x64', stream: true, ...fields },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    });
    expect(cost).toBe(0);
  });

  test.each([
    [{ partial_images: '4' }, 'partial_images'],
    [{ partial_images: '01' }, 'partial_images'],
    [{ stream: 'yes' }, 'stream'],
    [{ stream: 'false', partial_images: '1' }, 'partial_images'],
    [{ stream: 'true', n: '3' }, 'n'],
  ])('an edit with %j', async (fields, param) => {
    const cost = await charged(async () => {
      const image = await toFile(makePng(32, 32), 'in.png', { type: 'image/png' });
      const err = await openai.images.edit({ model: 'svc-image-edit-1', image, prompt: 'x', ...(fields as object) } as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe(param);
    });
    expect(cost).toBe(0);
  });
});

test('a test key streams for free', async () => {
  const testKey = await gw.newKey(acct, { mode: 'test' });
  const free = new OpenAI({ apiKey: testKey.secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const cost = await charged(async () => {
    const events: any[] = [];
    for await (const event of await free.images.generate({ model: 'svc-creative-v8', prompt: 'free', size: '64x64', stream: true, partial_images: 1 }))
      events.push(event);
    expect(events.map((e) => e.type)).toEqual(['image_generation.partial_image', 'image_generation.completed']);
  });
  expect(cost).toBe(0);
});
