/**
 * The gpt-image options (quality, background, output_format, output_compression, moderation,
 * style, user): the simulator honours output_format with real JPEG/WebP bytes and `background:
 * transparent` with a real alpha channel; a model routed upstream gets them forwarded as sent;
 * a model whose record does not list an option refuses it with a 400 naming it, charging nothing.
 */
import OpenAI, { toFile } from 'openai';
import sharp from 'sharp';
import { writeModelsFile } from '../support/models-file';
import { GPT_IMAGE_ABOUT, makePng, startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';

let upstream: FakeOpenAIUpstream;
let models: ReturnType<typeof writeModelsFile>;
let account: TestAccount;
let openai: OpenAI;

beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  const upstreamRoute = { provider: 'openai-compatible' as const, baseUrl: upstream.url, apiKeyEnv: 'UPSTREAM_IMG_KEY', timeoutSeconds: 5 };
  models = writeModelsFile({
    'svc-creative-v7': { ...upstreamRoute, upstreamModel: 'up-svc-creative-v7' },
    'svc-image-edit-1': { ...upstreamRoute, upstreamModel: 'up-svc-image-edit-1' },
  });
});
const gw = useTestGateway(() => ({ MODELS_FILE: models.path, UPSTREAM_IMG_KEY: 'sk-img-upstream-1234' }));
beforeAll(async () => {
  account = await gw.newAccount(100);
  openai = new OpenAI({ apiKey: (await gw.newKey(account)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await upstream.close();
  models.remove();
});

test.each([
  ['jpeg', 'jpeg', false],
  ['webp', 'webp', true],
  ['png', 'png', true],
] as const)('the simulator writes %s bytes, with alpha when the background is transparent', async (format, expected, transparent) => {
  const res = await openai.images.generate({
    model: 'svc-creative-v8',
    prompt: 'a lighthouse',
    size: '64x64',
    response_format: 'b64_json',
    output_format: format,
    ...(format === 'png' ? {} : { output_compression: 80 }),
    ...(transparent ? { background: 'transparent' as const } : {}),
  });
  const bytes = Buffer.from(res.data![0].b64_json!, 'base64');
  const meta = await sharp(bytes).metadata();
  expect(meta).toMatchObject({ format: expected, width: 64, height: 64 });
  if (transparent) {
    const { data } = await sharp(bytes).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    expect(data[3]).toBe(0); // a corner is transparent
    expect(data[(32 * 64 + 32) * 4 + 3]).toBe(255); // the centre is not
  }
});

test.each([0, 1, 100])("output_compression %i, the ends of OpenAI's 0–100 included, is honoured", async (level) => {
  for (const output_format of ['jpeg', 'webp'] as const) {
    const res = await openai.images.generate({
      model: 'svc-creative-v8',
      prompt: 'x',
      size: '64x64',
      response_format: 'b64_json',
      output_format,
      output_compression: level,
    });
    expect((await sharp(Buffer.from(res.data![0].b64_json!, 'base64')).metadata()).format).toBe(output_format);
  }
});

test('an upstream that answers fewer images than asked: the ones delivered are charged; none at all is a 502, nothing charged', async () => {
  const one = await openai.images.generate({ model: 'svc-creative-v7', prompt: 'x', size: '64x64', n: 1 }).withResponse();
  const perImage = Number(one.response.headers.get('x-svc-credits'));
  expect(perImage).toBeGreaterThan(0);
  upstream.setMode('fewer-images');
  try {
    const before = await gw.balance(account);
    const three = await openai.images.generate({ model: 'svc-creative-v7', prompt: 'x', size: '64x64', n: 3 }).withResponse();
    expect(three.data.data).toHaveLength(2);
    expect(Number(three.response.headers.get('x-svc-credits'))).toBeCloseTo(2 * perImage, 6);
    expect(await gw.balance(account)).toBeCloseTo(before - 2 * perImage, 6);
    const none = await openai.images.generate({ model: 'svc-creative-v7', prompt: 'x', size: '64x64', n: 1 }).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(OpenAI.APIError);
    expect((none as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect(await gw.balance(account)).toBeCloseTo(before - 2 * perImage, 6);
  } finally {
    upstream.setMode('ok');
  }
});

test.each(['b64_json', 'url'] as const)("an upstream's revised_prompt reaches the client with each image (%s)", async (response_format) => {
  upstream.setMode('revised-prompt');
  try {
    const res = await openai.images.generate({ model: 'svc-creative-v7', prompt: 'a lighthouse', size: '64x64', n: 2, response_format });
    expect(res.data!.map((d) => d.revised_prompt)).toEqual(['revised 0', 'revised 1']);
  } finally {
    upstream.setMode('ok');
  }
  const plain = await openai.images.generate({ model: 'svc-creative-v7', prompt: 'a lighthouse', size: '64x64', response_format });
  expect(plain.data![0].revised_prompt).toBeUndefined();
});

test('a stored JPEG is served with its own content type', async () => {
  const res = await openai.images.generate({ model: 'svc-creative-v8', prompt: 'x', size: '64x64', output_format: 'jpeg' });
  const media = await fetch(res.data![0].url!);
  expect(media.headers.get('content-type')).toBe('image/jpeg');
  expect((await sharp(Buffer.from(await media.arrayBuffer())).metadata()).format).toBe('jpeg');
});

test('options reach an upstream as sent, for generations and edits', async () => {
  upstream.requests.length = 0;
  await openai.images.generate({
    model: 'svc-creative-v7',
    prompt: 'x',
    size: '64x64',
    quality: 'high',
    background: 'opaque',
    output_format: 'webp',
    output_compression: 50,
    moderation: 'low',
    style: 'vivid',
    user: 'u-1',
  });
  expect(upstream.requests[0].json).toMatchObject({
    model: 'up-svc-creative-v7',
    quality: 'high',
    background: 'opaque',
    output_format: 'webp',
    output_compression: 50,
    moderation: 'low',
    style: 'vivid',
    user: 'u-1',
  });
  // gpt-image models refuse response_format (400 unknown_parameter): it is not sent, for generations as for edits.
  expect(upstream.requests[0].json).not.toHaveProperty('response_format');

  await openai.images.edit({
    model: 'svc-image-edit-1',
    prompt: 'blue',
    image: await toFile(makePng(32, 32), 'in.png', { type: 'image/png' }),
    quality: 'low',
    output_format: 'jpeg',
    output_compression: 40,
    user: 'u-2',
  });
  const fields = Object.fromEntries(upstream.requests[1].parts!.filter((p) => !p.filename).map((p) => [p.name, p.data.toString()]));
  expect(fields).toMatchObject({ model: 'up-svc-image-edit-1', quality: 'low', output_format: 'jpeg', output_compression: '40', user: 'u-2' });
});

test("an edit's input_fidelity reaches the upstream as sent; a value OpenAI does not know is a 400 naming it, nothing charged; generations do not take it", async () => {
  upstream.requests.length = 0;
  const image = async () => toFile(makePng(32, 32), 'in.png', { type: 'image/png' });
  await openai.images.edit({ model: 'svc-image-edit-1', prompt: 'blue', image: await image(), input_fidelity: 'high' });
  const fields = Object.fromEntries(upstream.requests[0].parts!.filter((p) => !p.filename).map((p) => [p.name, p.data.toString()]));
  expect(fields).toMatchObject({ model: 'up-svc-image-edit-1', input_fidelity: 'high' });
  const before = await gw.balance(account);
  const bad = await openai.images
    .edit({ model: 'svc-image-edit-1', prompt: 'blue', image: await image(), input_fidelity: 'medium' as 'high' })
    .catch((e: unknown) => e);
  expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
  expect((bad as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('input_fidelity');
  const gen = await gw.api('POST', '/v1/images/generations', {
    token: (openai as any).apiKey,
    body: { model: 'svc-creative-v7', prompt: 'x', size: '64x64', input_fidelity: 'high' },
  });
  expect(gen.status).toBe(400);
  expect(gen.body.error).toMatchObject({ param: 'input_fidelity' });
  expect(await gw.balance(account)).toBe(before);
  expect(upstream.requests).toHaveLength(1);
});

test.each([
  ['an option the model does not take', { model: 'flux-schnell', quality: 'high' }, 'quality'],
  ['a transparent JPEG', { model: 'svc-creative-v8', background: 'transparent', output_format: 'jpeg' }, 'background'],
  ['an unknown output format', { model: 'svc-creative-v8', output_format: 'gif' }, 'output_format'],
  ['compression as a string', { model: 'svc-creative-v8', output_format: 'webp', output_compression: '50' }, 'output_compression'],
])('%s is a 400 naming it, nothing charged', async (_name, body, param) => {
  const before = await gw.balance(account);
  const res = await gw.api('POST', '/v1/images/generations', { token: (openai as any).apiKey, body: { prompt: 'x', size: '64x64', ...body } });
  expect(res.status).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
  expect(await gw.balance(account)).toBe(before);
});

test('the model list says which options each image model takes', async () => {
  const models = (await openai.models.list()).data as unknown as { id: string; parameters?: string[]; capabilities: string[] }[];
  expect(models.find((m) => m.id === 'svc-creative-v8')!.parameters).toEqual(expect.arrayContaining(['output_format', 'background']));
  expect(models.find((m) => m.id === 'flux-schnell')!.parameters).toEqual([]);
  expect(models.find((m) => m.id === 'svc-chat-1')!.capabilities).toEqual(expect.arrayContaining(['tools', 'structured-outputs', 'vision']));
});

test.each([
  ['n as a string', { n: '2' }, 'n'],
  ['n as a boolean', { n: true }, 'n'],
  ['n as an array', { n: [3] }, 'n'],
  ['seed as a string', { seed: '12' }, 'seed'],
  ['n as a fraction', { n: 1.5 }, 'n'],
])('strict types on a JSON body: %s is a 400 naming it, nothing charged', async (_name, body, param) => {
  const before = await gw.balance(account);
  const res = await gw.api('POST', '/v1/images/generations', {
    token: (openai as any).apiKey,
    body: { model: 'svc-creative-v8', prompt: 'x', size: '64x64', ...body },
  });
  expect([res.status, res.body.error?.type, res.body.error?.param]).toEqual([400, 'invalid_request_error', param]);
  expect(await gw.balance(account)).toBe(before);
});

test('a multipart edit reads n and seed from digits; other text there is a 400 naming it', async () => {
  const ok = await openai.images.edit({ model: 'svc-image-edit-1', prompt: 'x', n: 2, image: await toFile(makePng(32, 32), 'in.png', { type: 'image/png' }) });
  expect(ok.data).toHaveLength(2);
  const form = new FormData();
  form.append('prompt', 'x');
  form.append('n', 'two');
  form.append('image', new Blob([makePng(16, 16)], { type: 'image/png' }), 'in.png');
  const res = await fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${(openai as any).apiKey}` }, body: form });
  expect(res.status).toBe(400);
  expect(((await res.json()) as any).error.param).toBe('n');
});

test('media is streamed with byte ranges, nosniff and an allowed content type', async () => {
  const res = await openai.images.generate({ model: 'svc-creative-v8', prompt: 'range', size: '64x64', output_format: 'webp', output_compression: 80 });
  const url = res.data![0].url!;
  const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
  const head = await fetch(url, { headers: { range: 'bytes=0-9' } });
  expect(head.status).toBe(206);
  expect(head.headers.get('content-range')).toBe(`bytes 0-9/${whole.length}`);
  expect(head.headers.get('x-content-type-options')).toBe('nosniff');
  expect(head.headers.get('content-type')).toBe('image/webp');
  expect(Buffer.from(await head.arrayBuffer())).toEqual(whole.subarray(0, 10));
  const tail = await fetch(url, { headers: { range: 'bytes=-5' } });
  expect(Buffer.from(await tail.arrayBuffer())).toEqual(whole.subarray(whole.length - 5));
  const open = await fetch(url, { headers: { range: `bytes=${whole.length - 3}-` } });
  expect(Buffer.from(await open.arrayBuffer())).toEqual(whole.subarray(whole.length - 3));
  const beyond = await fetch(url, { headers: { range: `bytes=${whole.length}-` } });
  expect([beyond.status, beyond.headers.get('content-range')]).toEqual([416, `bytes */${whole.length}`]);
});

test('what a gpt-image upstream says beside the images (usage, size, quality, output_format, background) reaches the client, generate and edit; the charge stays the per-image price', async () => {
  const one = await openai.images.generate({ model: 'svc-creative-v7', prompt: 'x', size: '64x64' }).withResponse();
  const perImage = Number(one.response.headers.get('x-svc-credits'));
  expect(one.data.usage).toBeUndefined();
  expect(one.data.size).toBeUndefined();
  upstream.setMode('gpt-image');
  try {
    const before = await gw.balance(account);
    const gen = await openai.images.generate({ model: 'svc-creative-v7', prompt: 'a lighthouse', size: '64x64', n: 2 }).withResponse();
    expect(gen.data).toMatchObject(GPT_IMAGE_ABOUT);
    expect(gen.data.data).toHaveLength(2);
    expect(Number(gen.response.headers.get('x-svc-credits'))).toBeCloseTo(2 * perImage, 6);
    expect(await gw.balance(account)).toBeCloseTo(before - 2 * perImage, 6);
    const edit = await openai.images.edit({ model: 'svc-image-edit-1', image: await toFile(makePng(32, 32), 'in.png', { type: 'image/png' }), prompt: 'blue' });
    expect(edit).toMatchObject(GPT_IMAGE_ABOUT);
  } finally {
    upstream.setMode('ok');
  }
});
