/**
 * Image edits on their own, over in-memory fakes: charged per image delivered, once; counted
 * against the image rate limit once, by the door ahead of the upload or by the call; inputs and
 * options checked with the field named before anything is held; a failure charges nothing; a
 * test key charges nothing and says what the edit would have cost.
 */
import { upstreamError } from '../../../src/domain/errors/domain-error';
import type { InputFile } from '../../../src/domain/images/image-port';
import { ImageService } from '../../../src/domain/images/image-service';
import { TestKeyBudget } from '../../../src/domain/ratelimit/test-key-budget';
import { fakeBilling } from '../../support/fakes/billing';
import { EDIT_A_CREDITS, testCatalog } from '../../support/fakes/catalog';
import { FakeImageProviders, pngImage } from '../../support/fakes/image-provider';
import { FakeMediaLibrary } from '../../support/fakes/media-library';
import { liveKey, testKey } from '../../support/fakes/principals';
import { FakeRateLimiter } from '../../support/fakes/rate-limiter';

function setup() {
  const { billing, book } = fakeBilling();
  const providers = new FakeImageProviders();
  const limiter = new FakeRateLimiter();
  const media = new FakeMediaLibrary();
  const images = new ImageService(testCatalog(), providers, billing, limiter, media.asLibrary(), new TestKeyBudget());
  return { images, book, limiter, media, provider: providers.live, simulator: providers.test };
}

const PER_IMAGE = EDIT_A_CREDITS * 1_000_000;
/** A multipart form's text fields: every value is text. */
const form = (extra: Record<string, string> = {}) => ({ model: 'edit-a', prompt: 'add a red door', ...extra });
const png = (width = 64, height = 64, filename = 'in.png'): InputFile => ({ data: pngImage(width, height), filename, contentType: 'image/png' });
const one = () => ({ images: [png()] });

describe('an edit', () => {
  test('is held and charged n × the price per image, once; with no response_format each image comes as url and b64_json', async () => {
    const { images, book, limiter, media, provider } = setup();
    const mask = png(64, 64, 'mask.png');
    const out = await images.edit(liveKey(), form({ n: '2' }), { images: [png()], mask }, undefined);

    expect(out.costCredits).toBe(2 * EDIT_A_CREDITS);
    expect(book.holds).toEqual([{ keyId: liveKey().keyId, amountMicro: 2 * PER_IMAGE }]);
    expect(book.commits).toEqual([expect.objectContaining({ requestId: expect.stringMatching(/^img_/), model: 'edit-a', costMicro: 2 * PER_IMAGE })]);
    expect(book.releases).toEqual([]);
    expect(out.data).toEqual([
      { url: expect.stringMatching(/^https:\/\/media\.test\//), b64_json: expect.any(String) },
      { url: expect.stringMatching(/^https:\/\/media\.test\//), b64_json: expect.any(String) },
    ]);
    expect(media.stored.size).toBe(2);
    expect(limiter.consumed).toEqual([{ keyId: liveKey().keyId, group: 'image' }]);
    expect(provider.edits).toEqual([
      expect.objectContaining({ upstreamModel: 'upstream-edit-a', prompt: 'add a red door', n: 2, mask, width: undefined, height: undefined }),
    ]);
  });

  test('naming a response_format answers that one alone; a size and the options the model takes go to the provider', async () => {
    const { images, media, provider } = setup();
    const out = await images.edit(
      liveKey(),
      form({ response_format: 'b64_json', size: '512x512', input_fidelity: 'high', output_format: 'webp' }),
      one(),
      undefined,
    );
    expect(out.data).toEqual([{ b64_json: expect.any(String) }]);
    expect(media.stored.size).toBe(0);
    expect(provider.edits[0]).toMatchObject({ width: 512, height: 512, options: { input_fidelity: 'high', output_format: 'webp' } });
  });

  test('admitted by the door ahead of its upload, it is counted once and answers the door’s headers', async () => {
    const { images, limiter } = setup();
    const admitted = await images.admitEdit(liveKey());
    const out = await images.edit(liveKey(), form(), one(), admitted);
    expect(limiter.consumed).toHaveLength(1);
    expect(out.headers).toEqual(admitted);
    expect(admitted['x-ratelimit-remaining-requests']).toBe('29');
  });

  test('a provider failure is the answer, charges nothing and gives the hold back', async () => {
    const { images, book, provider } = setup();
    const failure = upstreamError();
    provider.failure = failure;
    await expect(images.edit(liveKey(), form({ n: '3' }), one(), undefined)).rejects.toBe(failure);
    expect([book.commits, book.releases]).toEqual([[], [3 * PER_IMAGE]]);
  });

  test('a provider that answers fewer images than asked: charged for the images delivered', async () => {
    const { images, book, provider } = setup();
    provider.count = 1;
    const out = await images.edit(liveKey(), form({ n: '3' }), one(), undefined);
    expect(out.costCredits).toBe(EDIT_A_CREDITS);
    expect(book.commits.map((c) => c.costMicro)).toEqual([PER_IMAGE]);
  });

  test('of a test key is served by the simulator and moves no credit, but says what it would have cost', async () => {
    const { images, book, provider, simulator } = setup();
    const out = await images.edit(testKey(), form({ n: '2' }), one(), undefined);
    expect(out.costCredits).toBe(2 * EDIT_A_CREDITS);
    expect([simulator.calls, provider.calls]).toEqual([1, 0]);
    expect([book.holds, book.commits]).toEqual([[], []]);
  });
});

describe('a refused edit never reaches the provider and holds nothing', () => {
  const notAnImage: InputFile = { data: Buffer.from('GIF89a not really'), filename: 'in.gif', contentType: 'image/gif' };

  test.each([
    ['no image', form(), { images: [] }, { param: 'image' }],
    ['17 images', form(), { images: Array.from({ length: 17 }, () => png()) }, { param: 'image' }],
    ['a file that is no PNG, JPEG or WebP', form(), { images: [notAnImage] }, { param: 'image', code: 'invalid_image_format' }],
    ['the second of two images not an image', form(), { images: [png(), notAnImage] }, { param: 'image[1]', code: 'invalid_image_format' }],
    ['an image declaring a side over 2048 pixels', form(), { images: [png(2049, 64)] }, { param: 'image', code: 'image_too_large' }],
    ['a mask of other dimensions than the image', form(), { images: [png()], mask: png(128, 64) }, { param: 'mask', code: 'invalid_mask' }],
    ['n above 4', form({ n: '5' }), one(), { param: 'n' }],
    ['n with a leading zero', form({ n: '02' }), one(), { param: 'n' }],
    ['a size that is not WxH', form({ size: 'big' }), one(), { param: 'size' }],
    ['an unknown output_format', form({ output_format: 'gif' }), one(), { param: 'output_format' }],
    ['an unknown input_fidelity', form({ input_fidelity: 'exact' }), one(), { param: 'input_fidelity' }],
    ['an option the model does not take', form({ quality: 'high' }), one(), { param: 'quality' }],
    ['an unknown field', form({ strength: '0.5' }), one(), { param: 'strength' }],
  ])('%s: 400 naming it', async (_what, fields, files, refusal) => {
    const { images, book, provider } = setup();
    await expect(images.edit(liveKey(), fields, files, undefined)).rejects.toMatchObject({ type: 'invalid_request_error', ...refusal });
    expect([provider.calls, book.holds]).toEqual([0, []]);
  });

  test.each([
    ['a generation model', form({ model: 'image-a' }), liveKey(), { type: 'not_found_error', code: 'model_not_found', param: 'model' }],
    ['a model the key blocks', form(), liveKey({ blockedModels: ['edit-a'] }), { type: 'model_forbidden', param: 'model' }],
  ])('%s: refused', async (_what, fields, key, refusal) => {
    const { images, book, provider } = setup();
    await expect(images.edit(key, fields, one(), undefined)).rejects.toMatchObject(refusal);
    expect([provider.calls, book.holds]).toEqual([0, []]);
  });
});
