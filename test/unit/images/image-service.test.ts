/**
 * Image generations on their own, over in-memory fakes: charged per image delivered, once; every
 * option checked with the field named before anything is counted or held; a provider's failure
 * (or no image, or images that cannot be stored, or a client gone) charges nothing; a test key
 * charges nothing and says what the call would have cost. Edits: image-edits.test.ts.
 */
import { DomainError } from '../../../src/domain/errors/domain-error';
import { ImageService } from '../../../src/domain/images/image-service';
import { RATE_LIMITS } from '../../../src/domain/ratelimit/rate-limiter';
import { TestKeyBudget } from '../../../src/domain/ratelimit/test-key-budget';
import { CallAbort } from '../../../src/domain/shared/call-signal';
import { decodePng } from '../../support/png';
import { dailyCapSpent, fakeBilling } from '../../support/fakes/billing';
import { IMAGE_A_CREDITS, testCatalog } from '../../support/fakes/catalog';
import { FakeImageProviders } from '../../support/fakes/image-provider';
import { FakeMediaLibrary } from '../../support/fakes/media-library';
import { liveKey, testKey } from '../../support/fakes/principals';
import { FakeRateLimiter } from '../../support/fakes/rate-limiter';

function setup(options: { balanceCredits?: number; imageLimit?: number } = {}) {
  const { billing, book } = fakeBilling({ balanceCredits: options.balanceCredits });
  const providers = new FakeImageProviders();
  const limiter = new FakeRateLimiter({ ...RATE_LIMITS, image: options.imageLimit ?? RATE_LIMITS.image });
  const media = new FakeMediaLibrary();
  const images = new ImageService(testCatalog(), providers, billing, limiter, media.asLibrary(), new TestKeyBudget());
  return { images, book, limiter, media, provider: providers.live, simulator: providers.test };
}

const PER_IMAGE = IMAGE_A_CREDITS * 1_000_000;
const draw = (extra: Record<string, unknown> = {}) => ({ model: 'image-a', prompt: 'a lighthouse at dusk', ...extra });

describe('a generation', () => {
  test('is held and charged n × the price per image, once, and answers each image by its stored URL', async () => {
    const { images, book, media, provider } = setup({ balanceCredits: 10 });
    const out = await images.generate(liveKey(), draw({ n: 3 }));

    expect(out.costCredits).toBe(3 * IMAGE_A_CREDITS);
    expect(book.holds).toEqual([{ keyId: liveKey().keyId, amountMicro: 3 * PER_IMAGE }]);
    expect(book.commits).toEqual([
      { requestId: expect.stringMatching(/^img_/), model: 'image-a', heldMicro: 3 * PER_IMAGE, costMicro: 3 * PER_IMAGE, chargedMicro: 3 * PER_IMAGE },
    ]);
    expect(book.releases).toEqual([]);
    expect(book.balanceMicro).toBe(10_000_000 - 3 * PER_IMAGE);
    expect(out.data).toHaveLength(3);
    for (const item of out.data) {
      const id = /\/media\/(med_\d+)\.png$/.exec((item as { url: string }).url)?.[1];
      expect(media.stored.get(id!)).toMatchObject({ accountId: 'acct_a', contentType: 'image/png' });
    }
    expect(provider.generations).toEqual([
      expect.objectContaining({ upstreamModel: 'upstream-image-a', prompt: 'a lighthouse at dusk', n: 3, width: 1024, height: 1024 }),
    ]);
  });

  test.each([
    [undefined, 1024, 1024],
    ['auto', 1024, 1024],
    ['512x768', 512, 768],
  ])('size %s asks the provider for %ix%i', async (size, width, height) => {
    const { images, provider } = setup();
    await images.generate(liveKey(), draw(size === undefined ? {} : { size }));
    expect(provider.generations[0]).toMatchObject({ width, height });
  });

  test('b64_json answers the images inline and stores none', async () => {
    const { images, media } = setup();
    const out = await images.generate(liveKey(), draw({ response_format: 'b64_json' }));
    const b64 = (out.data[0] as { b64_json: string }).b64_json;
    expect(decodePng(Buffer.from(b64, 'base64'))).toEqual({ width: 64, height: 64 });
    expect(media.stored.size).toBe(0);
  });

  test('the options a model takes are forwarded as sent, and what the provider says of them is passed on', async () => {
    const { images, provider } = setup();
    provider.about = { quality: 'high', output_format: 'webp' };
    const out = await images.generate(liveKey(), draw({ quality: 'high', background: 'transparent', output_format: 'webp', output_compression: 80 }));
    expect(provider.generations[0].options).toEqual({ quality: 'high', background: 'transparent', output_format: 'webp', output_compression: 80 });
    expect(out.about).toEqual({ quality: 'high', output_format: 'webp' });
  });

  test('a provider that answers fewer images than asked: charged for the images delivered', async () => {
    const { images, book, provider } = setup();
    provider.count = 2;
    const out = await images.generate(liveKey(), draw({ n: 4 }));
    expect(out.data).toHaveLength(2);
    expect(out.costCredits).toBe(2 * IMAGE_A_CREDITS);
    expect(book.commits).toEqual([expect.objectContaining({ heldMicro: 4 * PER_IMAGE, costMicro: 2 * PER_IMAGE })]);
  });

  test('a provider that answers more images than asked: n served, n charged', async () => {
    const { images, book, provider } = setup();
    provider.count = 5;
    const out = await images.generate(liveKey(), draw({ n: 2 }));
    expect(out.data).toHaveLength(2);
    expect(book.commits.map((c) => c.costMicro)).toEqual([2 * PER_IMAGE]);
  });

  test('a retry whose first run was charged is answered with that charge: not counted, held or charged again', async () => {
    const { images, book, limiter } = setup();
    book.recordCharge('img_first', 2 * PER_IMAGE);
    const out = await images.generate(liveKey(), draw({ n: 2 }), { id: 'first', resumed: true });
    expect(out.costCredits).toBe(2 * IMAGE_A_CREDITS);
    expect([book.holds, book.commits, limiter.consumed]).toEqual([[], [], []]);
  });
});

describe('a generation that fails charges nothing and gives its hold back', () => {
  test('the provider failed: its error is the answer', async () => {
    const { images, book, media, provider } = setup();
    const failure = new DomainError('upstream_error', 'The model provider failed to answer.', { code: 'upstream_unavailable' });
    provider.failure = failure;
    await expect(images.generate(liveKey(), draw({ n: 2 }))).rejects.toBe(failure);
    expect(book.commits).toEqual([]);
    expect(book.releases).toEqual([2 * PER_IMAGE]);
    expect(media.stored.size).toBe(0);
  });

  test('the provider answered no image: 502', async () => {
    const { images, book, provider } = setup();
    provider.count = 0;
    await expect(images.generate(liveKey(), draw())).rejects.toMatchObject({ type: 'upstream_error' });
    expect([book.commits, book.releases]).toEqual([[], [PER_IMAGE]]);
  });

  test('an image could not be stored: the error is the answer, and the images stored for it are discarded', async () => {
    const { images, book, media } = setup();
    media.room = 1;
    await expect(images.generate(liveKey(), draw({ n: 2 }))).rejects.toMatchObject({ type: 'service_unavailable', code: 'storage_unavailable' });
    expect([book.commits, book.releases]).toEqual([[], [2 * PER_IMAGE]]);
    expect(media.stored.size).toBe(0);
  });

  test('the client left while the images were made', async () => {
    const { images, book, media, provider } = setup();
    const signal = new CallAbort();
    provider.during = () => signal.abort();
    await expect(images.generate(liveKey(), draw(), undefined, signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect([book.commits, book.releases]).toEqual([[], [PER_IMAGE]]);
    expect(media.stored.size).toBe(0);
  });
});

describe('a test key', () => {
  test('is served by the simulator and moves no credit, but says what the call would have cost', async () => {
    const { images, book, provider, simulator } = setup();
    const out = await images.generate(testKey(), draw({ n: 3 }));
    expect(out.costCredits).toBe(3 * IMAGE_A_CREDITS);
    expect(out.data).toHaveLength(3);
    expect([simulator.calls, provider.calls]).toEqual([1, 0]);
    expect([book.holds, book.commits, book.releases]).toEqual([[], [], []]);
  });

  test('may ask for at most 2048×2048 pixels × n: 400 test_key_pixel_limit naming n, before the simulator is asked', async () => {
    const { images, simulator } = setup();
    await expect(images.generate(testKey(), draw({ n: 2, size: '2048x2048' }))).rejects.toMatchObject({ code: 'test_key_pixel_limit', param: 'n' });
    expect(simulator.calls).toBe(0);
  });
});

describe('a refused generation never reaches the provider', () => {
  test('a balance that does not cover n images: 402', async () => {
    const { images, book, provider } = setup({ balanceCredits: 3 });
    await expect(images.generate(liveKey(), draw({ n: 2 }))).rejects.toMatchObject({ type: 'insufficient_credits' });
    expect([provider.calls, book.holds]).toEqual([0, []]);
  });

  test("a key's daily cap spent: 429 daily_cap_exceeded", async () => {
    const { images, book, provider } = setup();
    book.refusal = dailyCapSpent();
    await expect(images.generate(liveKey(), draw())).rejects.toMatchObject({ type: 'daily_cap_exceeded' });
    expect(provider.calls).toBe(0);
  });

  test('past the image rate limit: 429 with the x-ratelimit headers, nothing held', async () => {
    const { images, book, provider } = setup({ imageLimit: 1 });
    const first = await images.generate(liveKey(), draw());
    expect(first.headers['x-ratelimit-remaining-requests']).toBe('0');
    await expect(images.generate(liveKey(), draw())).rejects.toMatchObject({ type: 'rate_limit_exceeded', headers: { 'x-ratelimit-limit-requests': '1' } });
    expect([provider.calls, book.holds.length]).toEqual([1, 1]);
  });

  test.each([
    ['n above 4', draw({ n: 5 }), 'n'],
    ['n of 0', draw({ n: 0 }), 'n'],
    ['n as text', draw({ n: '2' }), 'n'],
    ['a fractional n', draw({ n: 1.5 }), 'n'],
    ['no prompt', { model: 'image-a' }, 'prompt'],
    ['a blank prompt', draw({ prompt: '   ' }), 'prompt'],
    ['a side under 64 pixels', draw({ size: '32x1024' }), 'size'],
    ['a side over 2048 pixels', draw({ size: '1024x4096' }), 'size'],
    ['a size that is not WxH', draw({ size: 'large' }), 'size'],
    ['an unknown response_format', draw({ response_format: 'png' }), 'response_format'],
    ['an unknown output_format', draw({ output_format: 'gif' }), 'output_format'],
    ['an unknown background', draw({ background: 'blue' }), 'background'],
    ['a transparent JPEG', draw({ background: 'transparent', output_format: 'jpeg' }), 'background'],
    ['output_compression for a PNG', draw({ output_compression: 50 }), 'output_compression'],
    ['output_compression above 100', draw({ output_format: 'webp', output_compression: 101 }), 'output_compression'],
    ['an option the model does not take', draw({ model: 'image-plain', quality: 'high' }), 'quality'],
    ['an edit-only option', draw({ input_fidelity: 'high' }), 'input_fidelity'],
    ['an unknown field', draw({ steps: 30 }), 'steps'],
  ])('%s: 400 naming the field, before any rate count or hold', async (_what, body, param) => {
    const { images, book, limiter, provider } = setup();
    await expect(images.generate(liveKey(), body)).rejects.toMatchObject({ type: 'invalid_request_error', param });
    expect([provider.calls, book.holds, limiter.consumed]).toEqual([0, [], []]);
  });

  test.each([
    ['an unknown model', draw({ model: 'image-z' }), liveKey(), { type: 'not_found_error', code: 'model_not_found', param: 'model' }],
    ['a chat model', draw({ model: 'chat-a' }), liveKey(), { type: 'not_found_error', code: 'model_not_found', param: 'model' }],
    ['a model the key blocks', draw(), liveKey({ blockedModels: ['image-a'] }), { type: 'model_forbidden', param: 'model' }],
    ['a model outside the key’s allowed list', draw(), liveKey({ allowedModels: ['image-plain'] }), { type: 'model_forbidden', param: 'model' }],
  ])('%s: refused before any rate count or hold', async (_what, body, key, refusal) => {
    const { images, book, limiter, provider } = setup();
    await expect(images.generate(key, body)).rejects.toMatchObject(refusal);
    expect([provider.calls, book.holds, limiter.consumed]).toEqual([0, [], []]);
  });
});
