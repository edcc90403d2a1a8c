/**
 * The OpenAI-compatible adapter's image streams against the fake upstream's wire: a generation
 * and an edit ask for `stream` and `partial_images` and read the previews and the image; an event
 * carrying an image far larger than any chat event is read whole; the failures an image stream
 * can end in are upstream_errors, after the previews already read.
 */
import { createServer } from 'node:http';
import { OpenAICompatibleProvider } from '../../../src/providers/openai-compatible';
import type { ImageStreamEvent } from '../../../src/providers/ports';
import { MAX_EVENT_CHARS } from '../../../src/providers/openai-compatible/sse-parser';
import { FAKE_IMAGE_USAGE } from '../../support/fake-openai-images';
import { makePng, startFakeOpenAIUpstream, type FakeOpenAIMode, type FakeOpenAIUpstream } from '../../support/fake-openai-upstream';
import { closeNow, listenLocal } from '../../support/local-http';

let upstream: FakeOpenAIUpstream;
let provider: OpenAICompatibleProvider;
beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  provider = new OpenAICompatibleProvider({ baseUrl: upstream.url, apiKey: 'sk-up', timeoutMs: 2000 });
});
afterAll(async () => {
  await provider.close();
  await upstream.close();
});
beforeEach(() => {
  upstream.setMode('ok');
  upstream.requests.length = 0;
});

const generation = { upstreamModel: 'up-image', prompt: 'a fox', n: 1, width: 32, height: 24, creative: true, partialImages: 2 };

async function read(events: AsyncIterable<ImageStreamEvent>): Promise<ImageStreamEvent[]> {
  const out: ImageStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

test('a generation asks for its previews and reads them, then the image and what the upstream said of it', async () => {
  const events = await read(provider.generateStream(generation));
  expect(events.map((e) => e.type)).toEqual(['partial', 'partial', 'completed']);
  expect(upstream.requests[0].json).toMatchObject({ model: 'up-image', stream: true, partial_images: 2, size: '32x24' });
  expect(upstream.requests[0].headers.accept).toBe('text/event-stream');
  const last = events.at(-1) as Extract<ImageStreamEvent, { type: 'completed' }>;
  expect(last.images[0].contentType).toBe('image/png');
  expect(last.images.about).toEqual({ usage: FAKE_IMAGE_USAGE, size: '32x24', quality: 'low', background: 'opaque', output_format: 'png' });
});

test('an edit sends its form with stream and partial_images', async () => {
  const image = { data: makePng(16, 16), filename: 'in.png', contentType: 'image/png' };
  const events = await read(provider.editStream({ upstreamModel: 'up-edit', prompt: 'blue', images: [image], n: 1, partialImages: 1 }));
  expect(events.map((e) => e.type)).toEqual(['partial', 'completed']);
  const fields = Object.fromEntries(upstream.requests[0].parts!.filter((p) => !p.filename).map((p) => [p.name, p.data.toString()]));
  expect(fields).toMatchObject({ model: 'up-edit', stream: 'true', partial_images: '1' });
});

test.each(['die-mid-stream', 'stream-error-event', 'stream-without-done'] as FakeOpenAIMode[])(
  '%s: the previews sent are read, then an upstream_error',
  async (mode) => {
    upstream.setMode(mode);
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const event of provider.generateStream(generation)) seen.push(event.type);
    })().catch((e: unknown) => e);
    // The fake sends one preview before it dies or errs; a stream that just ends sends both.
    expect(seen).toEqual(mode === 'stream-without-done' ? ['partial', 'partial'] : ['partial']);
    expect(failure).toMatchObject({ type: 'upstream_error' });
  },
);

test('an upstream failing before its first event throws before anything is read', async () => {
  upstream.setMode('error-500');
  await expect(read(provider.generateStream(generation))).rejects.toMatchObject({ type: 'upstream_error' });
});

test('an event carrying an image larger than a chat event may be is read whole', async () => {
  const big = Buffer.alloc(MAX_EVENT_CHARS, 7);
  const event = (type: string) => `event: ${type}\ndata: ${JSON.stringify({ type, b64_json: big.toString('base64') })}\n\n`;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.end(event('image_generation.partial_image') + event('image_generation.completed'));
  });
  const origin = await listenLocal(server);
  const local = new OpenAICompatibleProvider({ baseUrl: `${origin}/v1`, timeoutMs: 2000 });
  try {
    const events = await read(local.generateStream(generation));
    expect(events.map((e) => e.type)).toEqual(['partial', 'completed']);
    expect(events[0].type === 'partial' && events[0].image.data.equals(big)).toBe(true);
  } finally {
    await local.close();
    await closeNow(server);
  }
});
