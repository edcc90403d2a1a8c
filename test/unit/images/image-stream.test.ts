/**
 * Streamed images on their own, over in-memory fakes: the previews asked for are relayed (more are
 * dropped), then the image, charged once at its price when the completed event is reached; a
 * stream stopped before it (its client left), a provider that fails or ends early, or a preview
 * this service would not serve, charges nothing and stops the provider. A provider that cannot
 * stream answers its image as the one completed event.
 */
import { DomainError } from '../../../src/domain/errors/domain-error';
import type { GeneratedImages, ImageGenerationRequest, ImageStreamEvent } from '../../../src/domain/images/image-port';
import { ImageService } from '../../../src/domain/images/image-service';
import type { ImageStreamItem } from '../../../src/domain/images/image-stream';
import { TestKeyBudget } from '../../../src/domain/ratelimit/test-key-budget';
import { CallAbort } from '../../../src/domain/shared/call-signal';
import { fakeBilling } from '../../support/fakes/billing';
import { IMAGE_A_CREDITS, testCatalog } from '../../support/fakes/catalog';
import { FakeImageProvider, FakeImageProviders, pngImage } from '../../support/fakes/image-provider';
import { FakeMediaLibrary } from '../../support/fakes/media-library';
import { liveKey, testKey } from '../../support/fakes/principals';
import { FakeRateLimiter } from '../../support/fakes/rate-limiter';
import { fakeClock } from '../../support/fake-clock';

/** A provider that streams `script`, recording what it was asked and whether it was stopped. */
class StreamingProvider extends FakeImageProvider {
  script: ImageStreamEvent[] = [];
  /** Thrown once the script is out, instead of ending. */
  failAtEnd: Error | undefined;
  asked: ImageGenerationRequest[] = [];
  stopped = false;

  async *generateStream(request: ImageGenerationRequest): AsyncGenerator<ImageStreamEvent> {
    this.asked.push(request);
    try {
      for (const event of this.script) yield event;
      if (this.failAtEnd) throw this.failAtEnd;
    } finally {
      this.stopped = true;
    }
  }
}

const partial = (): ImageStreamEvent => ({ type: 'partial', image: { data: pngImage(8, 8), contentType: 'image/png' } });
const completed = (about?: GeneratedImages['about']): ImageStreamEvent => {
  const images: GeneratedImages = [{ data: pngImage(64, 64), contentType: 'image/png' }];
  if (about) images.about = about;
  return { type: 'completed', images };
};

/** `provider`: a streaming one unless given. */
function setup(given?: FakeImageProvider, budget = new TestKeyBudget()) {
  const provider = given ?? new StreamingProvider();
  const { billing, book } = fakeBilling({ balanceCredits: 10 });
  const clock = fakeClock();
  const images = new ImageService(
    testCatalog(),
    new FakeImageProviders(provider, provider),
    billing,
    new FakeRateLimiter(),
    new FakeMediaLibrary().asLibrary(),
    budget,
    clock,
  );
  return { images, book, provider: provider as StreamingProvider, clock };
}

const PRICE = IMAGE_A_CREDITS * 1_000_000;
const ask = (partialImages: number) => ({ model: 'image-a', prompt: 'a lighthouse', size: '64x64', stream: true, partial_images: partialImages });

async function drain(items: AsyncGenerator<ImageStreamItem>): Promise<ImageStreamItem[]> {
  const out: ImageStreamItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

test('relays the previews asked for, drops the rest, then charges the image once', async () => {
  const { images, book, provider, clock } = setup();
  provider.script = [partial(), partial(), partial(), completed({ usage: { total_tokens: 9 }, quality: 'low' })];
  const call = await images.generateStream(liveKey(), ask(2), new CallAbort());
  expect(book.commits).toEqual([]);
  const items = await drain(call.items);
  expect(items.map((i) => (i.type === 'partial' ? i.index : i.type))).toEqual([0, 1, 'completed']);
  expect(provider.asked[0]).toMatchObject({ partialImages: 2, n: 1, width: 64, height: 64 });
  expect(items[0]).toMatchObject({
    createdAt: Math.floor(clock.now() / 1000),
    facts: { size: '64x64', quality: 'auto', background: 'auto', output_format: 'png' },
  });
  expect(items[2]).toMatchObject({ costCredits: IMAGE_A_CREDITS, usage: { total_tokens: 9 }, facts: { quality: 'low', output_format: 'png' } });
  expect(book.holds).toEqual([{ keyId: liveKey().keyId, amountMicro: PRICE }]);
  expect(book.commits).toEqual([expect.objectContaining({ requestId: expect.stringMatching(/^img_/), costMicro: PRICE, chargedMicro: PRICE })]);
  expect(book.releases).toEqual([]);
});

test('a provider that cannot stream answers its image as the one completed event, with a usage of zeros', async () => {
  const { images, book } = setup(new FakeImageProvider());
  const items = await drain((await images.generateStream(liveKey(), ask(3), new CallAbort())).items);
  expect(items).toEqual([
    expect.objectContaining({
      type: 'completed',
      usage: { input_tokens: 0, input_tokens_details: { image_tokens: 0, text_tokens: 0 }, output_tokens: 0, total_tokens: 0 },
    }),
  ]);
  expect(book.commits).toHaveLength(1);
});

test('a stream stopped after a preview (its client left) charges nothing and stops the provider', async () => {
  const { images, book, provider } = setup();
  provider.script = [partial(), partial(), completed()];
  const { items } = await images.generateStream(liveKey(), ask(2), new CallAbort());
  expect((await items.next()).value).toMatchObject({ type: 'partial', index: 0 });
  await items.return(undefined);
  expect(provider.stopped).toBe(true);
  expect(book.commits).toEqual([]);
  expect(book.releases).toEqual([PRICE]);
});

test('a client gone by the time the image is made gets it never and pays nothing', async () => {
  const { images, book, provider } = setup();
  const signal = new CallAbort();
  provider.script = [partial(), completed()];
  const { items } = await images.generateStream(liveKey(), ask(1), signal);
  await items.next();
  signal.abort();
  expect(await items.next()).toEqual({ done: true, value: undefined });
  expect(book.commits).toEqual([]);
  expect(book.releases).toEqual([PRICE]);
});

test.each([
  ['fails after a preview', [partial()], new DomainError('upstream_error', 'The model provider failed mid-stream.')],
  ['ends before its image', [partial()], undefined],
  [
    'sends a preview that is no image',
    [{ type: 'partial', image: { data: Buffer.from('not an image'), contentType: 'image/png' } } as ImageStreamEvent],
    undefined,
  ],
  ['completes with no image', [{ type: 'completed', images: [] } as ImageStreamEvent], undefined],
])('a provider that %s: upstream_error, nothing charged', async (_case, script, failure) => {
  const { images, book, provider } = setup();
  provider.script = script;
  provider.failAtEnd = failure;
  const { items } = await images.generateStream(liveKey(), ask(2), new CallAbort());
  await expect(drain(items)).rejects.toMatchObject({ type: 'upstream_error' });
  expect(book.commits).toEqual([]);
  expect(book.releases).toEqual([PRICE]);
});

test("a test key's simulator slot is held while its stream runs and given back when it ends", async () => {
  const budget = new TestKeyBudget({ maxPixelsPerRequest: 2048 * 2048, concurrentPerKey: 1, concurrentPerInstance: 4 });
  const { images, provider } = setup(undefined, budget);
  provider.script = [partial(), completed()];
  const first = await images.generateStream(testKey(), ask(1), new CallAbort());
  await expect(images.generateStream(testKey(), ask(1), new CallAbort())).rejects.toMatchObject({ code: 'test_key_busy' });
  const items = await drain(first.items);
  expect(items.at(-1)).toMatchObject({ type: 'completed', costCredits: IMAGE_A_CREDITS });
  await drain((await images.generateStream(testKey(), ask(1), new CallAbort())).items);
});

test('a balance that does not cover the image: 402 before the provider is asked', async () => {
  const { billing } = fakeBilling({ balanceCredits: 1 });
  const provider = new StreamingProvider();
  const images = new ImageService(
    testCatalog(),
    new FakeImageProviders(provider, provider),
    billing,
    new FakeRateLimiter(),
    new FakeMediaLibrary().asLibrary(),
    new TestKeyBudget(),
  );
  await expect(images.generateStream(liveKey(), ask(1), new CallAbort())).rejects.toMatchObject({ type: 'insufficient_credits' });
  expect(provider.asked).toEqual([]);
});
