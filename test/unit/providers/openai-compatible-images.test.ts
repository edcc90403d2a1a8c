import OpenAI, { toFile } from 'openai';
import { PNG } from 'pngjs';
import { request } from 'undici';
import { OpenAICompatibleProvider } from '../../../src/providers/openai-compatible';
import type { ImageEditRequest } from '../../../src/providers/ports';
import { type FakeOpenAIUpstream, makePng, startFakeOpenAIUpstream } from '../../support/fake-openai-upstream';

const API_KEY = 'sk-upstream-secret-456';

/** Test-only fetchMedia: a plain GET of the fake's loopback URL. */
async function fetchMedia(url: string) {
  const response = await request(url);
  return { data: Buffer.from(await response.body.arrayBuffer()), contentType: String(response.headers['content-type']) };
}

describe('OpenAICompatibleProvider images', () => {
  let upstream: FakeOpenAIUpstream;
  let provider: OpenAICompatibleProvider;

  beforeAll(async () => {
    upstream = await startFakeOpenAIUpstream();
    provider = new OpenAICompatibleProvider({ baseUrl: `${upstream.url}/`, apiKey: API_KEY, timeoutMs: 2000, fetchMedia });
  });
  afterAll(async () => {
    await provider.close();
    await upstream.close();
  });
  beforeEach(() => {
    upstream.setMode('ok');
    upstream.requests.length = 0;
  });

  it('generates images and decodes b64_json into PNGs of the requested size', async () => {
    const images = await provider.generate({
      upstreamModel: 'up-image',
      prompt: 'a red fox',
      negativePrompt: 'blur',
      n: 2,
      width: 24,
      height: 16,
      seed: 42,
      stylePreset: 'anime',
      creative: true,
    });
    expect(images).toHaveLength(2);
    for (const image of images) {
      expect(image.contentType).toBe('image/png');
      const png = PNG.sync.read(image.data);
      expect([png.width, png.height]).toEqual([24, 16]);
    }
    const [sent] = upstream.requests;
    expect(sent.path).toBe('/v1/images/generations');
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.json).toEqual({
      model: 'up-image',
      prompt: 'a red fox',
      n: 2,
      size: '24x16',
      negative_prompt: 'blur',
      seed: 42,
      style_preset: 'anime',
    });
  });

  it('sends no optional fields the caller did not set (no response_format either: gpt-image models refuse it)', async () => {
    await provider.generate({ upstreamModel: 'up-image', prompt: 'x', n: 1, width: 8, height: 8, creative: false });
    expect(Object.keys(upstream.requests[0].json).sort()).toEqual(['model', 'n', 'prompt', 'size']);
  });

  it('downloads images through fetchMedia when the upstream answers URLs', async () => {
    upstream.setMode('image-url');
    const images = await provider.generate({ upstreamModel: 'up-image', prompt: 'x', n: 1, width: 8, height: 8, creative: false });
    expect(images[0].contentType).toBe('image/png');
    expect(PNG.sync.read(images[0].data).width).toBe(16);
  });

  it('fails with upstream_error when the upstream answers URLs and no fetchMedia is configured', async () => {
    upstream.setMode('image-url');
    const bare = new OpenAICompatibleProvider({ baseUrl: upstream.url, timeoutMs: 2000 });
    await expect(bare.generate({ upstreamModel: 'm', prompt: 'x', n: 1, width: 8, height: 8, creative: false })).rejects.toMatchObject({
      type: 'upstream_error',
    });
    await bare.close();
  });

  const editRequest = (images: number, withMask: boolean): ImageEditRequest => ({
    upstreamModel: 'up-edit',
    prompt: 'make it blue',
    images: Array.from({ length: images }, (_, i) => ({ data: makePng(4, 4), filename: `in-${i}.png`, contentType: 'image/png' })),
    mask: withMask ? { data: makePng(4, 4), filename: 'mask.png', contentType: 'image/png' } : undefined,
    n: 1,
    width: 12,
    height: 12,
  });

  it('sends an edit as multipart with one `image` part and a mask', async () => {
    const images = await provider.edit(editRequest(1, true));
    expect(PNG.sync.read(images[0].data).width).toBe(12);

    const [sent] = upstream.requests;
    expect(sent.path).toBe('/v1/images/edits');
    expect(sent.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const byName = Object.fromEntries(sent.parts!.map((p) => [p.name, p]));
    expect(Object.keys(byName).sort()).toEqual(['image', 'mask', 'model', 'n', 'prompt', 'size']);
    expect(byName.model.data.toString()).toBe('up-edit');
    expect(byName.prompt.data.toString()).toBe('make it blue');
    expect(byName.size.data.toString()).toBe('12x12');
    expect(byName.image).toMatchObject({ filename: 'in-0.png', contentType: 'image/png' });
    expect(byName.image.data.equals(makePng(4, 4))).toBe(true);
    expect(byName.mask).toMatchObject({ filename: 'mask.png' });
  });

  it('sends several input images as repeated `image[]` parts, like the OpenAI SDK', async () => {
    await provider.edit(editRequest(3, false));
    const ours = upstream.requests[0].parts!.filter((p) => p.name === 'image[]');
    expect(ours.map((p) => p.filename)).toEqual(['in-0.png', 'in-1.png', 'in-2.png']);

    // The official SDK names the parts the same way.
    const client = new OpenAI({ baseURL: upstream.url, apiKey: API_KEY, maxRetries: 0 });
    await client.images.edit({
      model: 'up-edit',
      prompt: 'p',
      image: [await toFile(makePng(4, 4), 'a.png', { type: 'image/png' }), await toFile(makePng(4, 4), 'b.png', { type: 'image/png' })],
    });
    expect(upstream.requests[1].parts!.filter((p) => p.name === 'image[]')).toHaveLength(2);
  });
});
