/**
 * The simulator's image streams: as many previews as asked (at most three), each the image's size
 * and format, each nearer the image than the one before; then the image the unstreamed call makes,
 * with a usage. A call aborted between previews stops there.
 */
import sharp from 'sharp';
import { SimulatorImageEditProvider, SimulatorImageProvider } from '../../../src/providers/simulator';
import type { GeneratedImage, ImageGenerationRequest, ImageStreamEvent } from '../../../src/providers/ports';
import { CallAbort } from '../../../src/domain/shared/call-signal';
import { makePng } from '../../support/fake-openai-upstream';

const images = new SimulatorImageProvider();
const request = (overrides: Partial<ImageGenerationRequest> = {}): ImageGenerationRequest => ({
  upstreamModel: 'sim-image',
  prompt: 'a red fox in the snow',
  n: 1,
  width: 96,
  height: 64,
  creative: true,
  partialImages: 3,
  ...overrides,
});

async function read(events: AsyncIterable<ImageStreamEvent>): Promise<ImageStreamEvent[]> {
  const out: ImageStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const imageOf = (e: ImageStreamEvent): GeneratedImage => (e.type === 'partial' ? e.image : e.images[0]);
const rgba = async (image: GeneratedImage) => (await sharp(image.data).ensureAlpha().raw().toBuffer({ resolveWithObject: true })).data;

test.each([0, 1, 2, 3])('%i previews, each nearer the image, then the image the unstreamed call makes', async (partialImages) => {
  const events = await read(images.generateStream(request({ partialImages })));
  expect(events.map((e) => e.type)).toEqual([...Array(partialImages).fill('partial'), 'completed']);
  const [plain] = await images.generate(request());
  expect(imageOf(events.at(-1)!).data.equals(plain.data)).toBe(true);
  const final = await rgba(plain);
  let last = Infinity;
  for (const e of events.slice(0, -1)) {
    expect(await sharp(imageOf(e).data).metadata()).toMatchObject({ format: 'png', width: 96, height: 64 });
    const px = await rgba(imageOf(e));
    let away = 0;
    for (let i = 0; i < px.length; i++) away += Math.abs(px[i] - final[i]);
    expect(away).toBeLessThan(last);
    last = away;
  }
  const done = events.at(-1) as Extract<ImageStreamEvent, { type: 'completed' }>;
  expect(done.images.about?.usage).toMatchObject({ output_tokens: 2, input_tokens_details: { image_tokens: 0 } });
});

test('previews are in the format asked for, with the image transparent where it is', async () => {
  const jpeg = await read(images.generateStream(request({ partialImages: 1, options: { output_format: 'jpeg', output_compression: 60 } })));
  expect((await sharp(imageOf(jpeg[0]).data).metadata()).format).toBe('jpeg');
  const clear = await read(images.generateStream(request({ partialImages: 2, options: { background: 'transparent' } })));
  for (const e of clear) expect((await rgba(imageOf(e)))[3]).toBe(0);
});

test('a stream aborted after a preview stops before the next', async () => {
  const signal = new CallAbort();
  const seen: string[] = [];
  const failure = await (async () => {
    for await (const event of images.generateStream(request({ signal }))) {
      seen.push(event.type);
      signal.abort();
    }
  })().catch((e: unknown) => e);
  expect(seen).toEqual(['partial']);
  expect(failure).toBeDefined();
});

test('an edit streams previews of the edited image, counting its input image', async () => {
  const edits = new SimulatorImageEditProvider();
  const input = { data: makePng(40, 30), filename: 'in.png', contentType: 'image/png' };
  const events = await read(edits.editStream({ upstreamModel: 'sim-edit', prompt: 'blue', images: [input], n: 1, partialImages: 2 }));
  expect(events.map((e) => e.type)).toEqual(['partial', 'partial', 'completed']);
  for (const e of events) expect(await sharp(imageOf(e).data).metadata()).toMatchObject({ width: 40, height: 30 });
  const done = events.at(-1) as Extract<ImageStreamEvent, { type: 'completed' }>;
  expect(done.images.about?.usage).toMatchObject({ input_tokens_details: { image_tokens: 1 } });
});
