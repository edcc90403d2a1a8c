import { PNG } from 'pngjs';
import sharp from 'sharp';
import { SimulatorImageEditProvider, SimulatorImageProvider } from '../../../src/providers/simulator';
import type { ImageEditRequest, ImageGenerationRequest } from '../../../src/providers/ports';
import { DomainError } from '../../../src/domain/errors/domain-error';

const images = new SimulatorImageProvider();
const edits = new SimulatorImageEditProvider();

function generation(overrides: Partial<ImageGenerationRequest> = {}): ImageGenerationRequest {
  return { upstreamModel: 'sim-image', prompt: 'a red fox in the snow', n: 1, width: 64, height: 48, creative: false, ...overrides };
}

function solidPng(width: number, height: number, rgba: [number, number, number, number]): Buffer {
  const png = new PNG({ width, height });
  for (let i = 0; i < png.data.length; i += 4) png.data.set(rgba, i);
  return PNG.sync.write(png);
}

function editRequest(overrides: Partial<ImageEditRequest> = {}): ImageEditRequest {
  return {
    upstreamModel: 'sim-edit',
    prompt: 'make it blue',
    images: [{ data: solidPng(40, 30, [200, 100, 50, 255]), filename: 'in.png', contentType: 'image/png' }],
    n: 1,
    ...overrides,
  };
}

describe('SimulatorImageProvider', () => {
  it('makes decodable PNGs of exactly the asked size', async () => {
    const [image] = await images.generate(generation({ width: 300, height: 200 }));
    expect(image.contentType).toBe('image/png');
    const decoded = PNG.sync.read(image.data);
    expect([decoded.width, decoded.height]).toEqual([300, 200]);
  });

  it('is byte-identical for the same inputs and differs for another seed', async () => {
    const a = await images.generate(generation({ seed: 1 }));
    const b = await images.generate(generation({ seed: 1 }));
    const c = await images.generate(generation({ seed: 2 }));
    expect(a[0].data.equals(b[0].data)).toBe(true);
    expect(a[0].data.equals(c[0].data)).toBe(false);
  });

  it('varies with the prompt, negative prompt, style and model', async () => {
    const base = (await images.generate(generation()))[0].data;
    for (const overrides of [{ prompt: 'a blue fox' }, { negativePrompt: 'blur' }, { stylePreset: 'anime' }, { upstreamModel: 'other' }]) {
      const other = (await images.generate(generation(overrides)))[0].data;
      expect(other.equals(base)).toBe(false);
    }
  });

  it('returns n distinct images', async () => {
    const out = await images.generate(generation({ n: 3, seed: 5 }));
    expect(out).toHaveLength(3);
    expect(new Set(out.map((i) => i.data.toString('base64'))).size).toBe(3);
  });

  it('makes a 1024x1024 PNG', async () => {
    const [image] = await images.generate(generation({ width: 1024, height: 1024, seed: 9 }));
    expect(PNG.sync.read(image.data).width).toBe(1024);
  });

  it('refuses [policy] on a standard model with content_policy_violation', async () => {
    const attempt = images.generate(generation({ prompt: 'something [POLICY] here' }));
    await expect(attempt).rejects.toBeInstanceOf(DomainError);
    await expect(images.generate(generation({ prompt: 'x [policy]' }))).rejects.toMatchObject({
      type: 'content_policy_violation',
      status: 422,
    });
  });

  it('lets [policy] through on a creative model', async () => {
    const [image] = await images.generate(generation({ prompt: 'x [policy]', creative: true }));
    expect(PNG.sync.read(image.data).width).toBe(64);
  });
});

describe('SimulatorImageEditProvider', () => {
  it('returns a decodable PNG of the input size, changed from the input', async () => {
    const [image] = await edits.edit(editRequest());
    expect(image.contentType).toBe('image/png');
    const decoded = PNG.sync.read(image.data);
    expect([decoded.width, decoded.height]).toEqual([40, 30]);
    expect(Array.from(decoded.data.subarray(0, 3))).not.toEqual([200, 100, 50]);
  });

  it('honours the requested size, n, and determinism', async () => {
    const out = await edits.edit(editRequest({ width: 64, height: 64, n: 2, seed: 3 }));
    expect(out).toHaveLength(2);
    for (const image of out) expect(PNG.sync.read(image.data).width).toBe(64);
    const again = await edits.edit(editRequest({ width: 64, height: 64, n: 2, seed: 3 }));
    expect(again[0].data.equals(out[0].data)).toBe(true);
    const otherSeed = await edits.edit(editRequest({ width: 64, height: 64, n: 1, seed: 4 }));
    expect(otherSeed[0].data.equals(out[0].data)).toBe(false);
  });

  it('edits only the transparent part of a mask', async () => {
    const mask = new PNG({ width: 40, height: 30 });
    for (let i = 0; i < mask.data.length; i += 4) mask.data[i + 3] = i < mask.data.length / 2 ? 0 : 255;
    const [image] = await edits.edit(editRequest({ mask: { data: PNG.sync.write(mask), filename: 'mask.png', contentType: 'image/png' } }));
    const decoded = PNG.sync.read(image.data);
    const lastPixel = decoded.data.length - 4;
    expect(Array.from(decoded.data.subarray(0, 3))).not.toEqual([200, 100, 50]);
    expect(Array.from(decoded.data.subarray(lastPixel, lastPixel + 3))).toEqual([200, 100, 50]);
  });

  it('answers invalid_request_error for an image that is not an image', async () => {
    const request = editRequest({ images: [{ data: Buffer.from('not a png'), filename: 'x.png', contentType: 'image/png' }] });
    await expect(edits.edit(request)).rejects.toMatchObject({
      type: 'invalid_request_error',
      param: 'image',
      message: expect.stringContaining('could not be decoded'),
    });
  });

  it('takes JPEG and WebP inputs too', async () => {
    for (const format of ['jpeg', 'webp'] as const) {
      const input = sharp({ create: { width: 48, height: 32, channels: 3, background: '#c86432' } });
      const data = await input[format]().toBuffer();
      const [image] = await edits.edit(editRequest({ images: [{ data, filename: `in.${format}`, contentType: `image/${format}` }] }));
      expect(PNG.sync.read(image.data).width).toBe(48);
    }
  });

  it('refuses to decode past the pixel bound even when the domain check was skipped (limitInputPixels)', async () => {
    // A real 4096x1100 PNG (4.5 M pixels > 2048 x 2048), a few kB compressed.
    const data = await sharp({ create: { width: 4096, height: 1100, channels: 4, background: '#000000' } })
      .png()
      .toBuffer();
    await expect(edits.edit(editRequest({ images: [{ data, filename: 'x.png', contentType: 'image/png' }] }))).rejects.toMatchObject({
      type: 'invalid_request_error',
      param: 'image',
    });
  });

  it('answers invalid_request_error naming mask for a mask that is not a PNG', async () => {
    const request = editRequest({ mask: { data: Buffer.from('nope'), filename: 'm.png', contentType: 'image/png' } });
    await expect(edits.edit(request)).rejects.toMatchObject({ type: 'invalid_request_error', param: 'mask' });
  });

  it('copes with 2048x2048', async () => {
    const [image] = await edits.edit(editRequest({ width: 2048, height: 2048 }));
    const decoded = PNG.sync.read(image.data);
    expect([decoded.width, decoded.height]).toEqual([2048, 2048]);
  });
});
