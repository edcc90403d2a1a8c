/**
 * Image streams over a model's routes: a first route that fails before its first event is passed
 * by for the next (an OpenAI-compatible one relays its stream; a Replicate one, which cannot
 * stream, answers its image as the completed event), charged once; a stream that has sent a
 * preview is never retried, and costs nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { BUILTIN_CATALOG } from '../../src/domain/catalog/builtin-catalog';
import type { CatalogInput } from '../../src/domain/catalog/model';
import { allCallsBilled } from '../support/billed';
import { startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import { startFakeReplicateUpstream } from '../support/fake-replicate-upstream';
import { pngOf } from '../support/image-stream-events';
import { useTestGateway } from '../support/use-test-gateway';

let a: FakeOpenAIUpstream;
let b: FakeOpenAIUpstream;
let replicate: Awaited<ReturnType<typeof startFakeReplicateUpstream>>;
let dir: string;
const oa = (id: string, baseUrl: string, priority: number) => ({
  id,
  provider: 'openai-compatible' as const,
  upstreamModel: `up-${id}`,
  baseUrl,
  timeoutSeconds: 5,
  priority,
});

beforeAll(async () => {
  [a, b] = await Promise.all([startFakeOpenAIUpstream(), startFakeOpenAIUpstream()]);
  replicate = await startFakeReplicateUpstream();
  dir = mkdtempSync(join(tmpdir(), 'gw-image-routes-'));
  const image = (id: string, routes: unknown[]) => ({ id, group: 'image', ownedBy: 'svc', providerLabel: 'Svc', creditsPerImage: 2, creative: true, routes });
  const catalog = {
    ...BUILTIN_CATALOG,
    models: [
      ...BUILTIN_CATALOG.models,
      image('img-two-upstreams', [oa('img-a', a.url, 0), oa('img-b', b.url, 1)]),
      image('img-then-replicate', [
        oa('img-a2', a.url, 0),
        { id: 'img-replicate', provider: 'replicate', upstreamModel: 'acme/creative', baseUrl: replicate.url, timeoutSeconds: 5, priority: 1 },
      ]),
    ],
  } as CatalogInput;
  writeFileSync(join(dir, 'models.json'), JSON.stringify(catalog));
});
const gw = useTestGateway(() => ({ MODELS_FILE: join(dir, 'models.json') }));
afterAll(async () => {
  await Promise.all([a, b, replicate].map((u) => u.close()));
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  a.setMode('ok');
  b.setMode('ok');
});

async function client() {
  const acct = await gw.newAccount(10);
  return { acct, openai: new OpenAI({ apiKey: (await gw.newKey(acct)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 }) };
}

const streamed = async (openai: OpenAI, model: string) => {
  const events: any[] = [];
  for await (const e of await openai.images.generate({ model, prompt: 'a fox', size: '64x64', stream: true, partial_images: 1 })) events.push(e);
  return events;
};

test('a first route failing before its first event: the next route streams, charged once', async () => {
  const { acct, openai } = await client();
  a.setMode('error-500');
  const events = await streamed(openai, 'img-two-upstreams');
  expect(events.map((e) => e.type)).toEqual(['image_generation.partial_image', 'image_generation.completed']);
  expect(b.requests.at(-1)?.json).toMatchObject({ model: 'up-img-b', stream: true, partial_images: 1 });
  await allCallsBilled(gw, acct.id);
  expect(await gw.balance(acct)).toBe(8);
});

test('a Replicate route, which cannot stream, answers its image as the completed event, charged once', async () => {
  const { acct, openai } = await client();
  a.setMode('error-500');
  replicate.setScript({ inline: true, finishAfterMs: 50 });
  const events = await streamed(openai, 'img-then-replicate');
  expect(events.map((e) => e.type)).toEqual(['image_generation.completed']);
  expect(pngOf(events[0].b64_json).width).toBeGreaterThan(0);
  await allCallsBilled(gw, acct.id);
  expect(await gw.balance(acct)).toBe(8);
});

test('a stream that sent a preview is not retried when its route dies: an error, nothing charged', async () => {
  const { acct, openai } = await client();
  a.setMode('die-mid-stream');
  const before = b.requests.length;
  const err = await streamed(openai, 'img-two-upstreams').catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect(b.requests.length).toBe(before);
  await allCallsBilled(gw, acct.id);
  expect(await gw.balance(acct)).toBe(10);
});
