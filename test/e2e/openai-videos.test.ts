/**
 * The `openai` SDK, unmodified, against /v1/videos: create (multipart, as the SDK sends it, with
 * and without an uploaded `input_reference`), retrieve until completed, downloadContent of a
 * playable MP4 and of its PNG thumbnail, list with its pages both ways, delete, an Idempotency-Key
 * on create, and a size that maps to nothing refused naming `size`; the same job read through
 * /v1/video/retrieve; the balance checked at each step.
 */
import { execFileSync } from 'node:child_process';
import OpenAI, { toFile } from 'openai';
import type { TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { decodePng } from '../support/png';
import { makePng } from '../support/fake-openai-upstream';
import { pollUntil } from '../support/poll';

const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '1' });

type Seconds = OpenAI.Videos.VideoSeconds;
type Size = OpenAI.Videos.VideoSize;
const TEXT = 'svc-2.5-preview-text-to-video';
const IMAGE = 'svc-2.5-preview-image-to-video';

async function liveClient(credits: number): Promise<{ acct: TestAccount; openai: OpenAI }> {
  const acct = await gw.newAccount(credits);
  const key = await gw.newKey(acct);
  return { acct, openai: new OpenAI({ apiKey: key.secret, baseURL: `${gw.url}/v1`, maxRetries: 0 }) };
}

const untilDone = (openai: OpenAI, id: string) =>
  pollUntil(
    () => openai.videos.retrieve(id),
    (v) => v.status === 'completed' || v.status === 'failed',
  );

function hasFfprobe(): boolean {
  try {
    execFileSync('ffprobe', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('create, retrieve until completed, download a playable MP4 and its PNG thumbnail; charged once, the same job on /v1/video/retrieve', async () => {
  const { acct, openai } = await liveClient(100);
  const { data: created, response } = await openai.videos
    .create({ model: TEXT, prompt: 'a paper boat on a river', seconds: '10' as Seconds, size: '720x1280' })
    .withResponse();
  expect(created).toEqual({
    id: expect.stringMatching(/^vid_/),
    object: 'video',
    model: TEXT,
    status: 'queued',
    progress: 0,
    created_at: expect.any(Number),
    completed_at: null,
    expires_at: null,
    seconds: '10',
    size: '720x1280',
    prompt: 'a paper boat on a river',
    remixed_from_video_id: null,
    error: null,
  });
  // 10 s at 720p: 30 credits, charged at acceptance.
  expect(response.headers.get('x-svc-credits')).toBe('30');
  expect(await gw.balance(acct)).toBe(70);

  const seen: number[] = [];
  const done = await pollUntil(
    () => openai.videos.retrieve(created.id),
    (v) => (seen.push(v.progress), v.status === 'completed'),
  );
  expect(seen.every((p) => Number.isInteger(p) && p >= 0 && p <= 100)).toBe(true);
  expect(done).toMatchObject({ status: 'completed', progress: 100, completed_at: expect.any(Number), error: null });
  expect(done.completed_at!).toBeGreaterThanOrEqual(done.created_at);

  const mp4 = Buffer.from(await (await openai.videos.downloadContent(created.id)).arrayBuffer());
  expect(mp4.subarray(4, 8).toString('latin1')).toBe('ftyp');
  if (hasFfprobe()) {
    const probe = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name,width,height', '-of', 'csv=p=0', '-i', 'pipe:0'], { input: mp4 });
    expect(probe.toString().trim()).toBe('h264,96,160');
  }
  const thumbnail = await openai.videos.downloadContent(created.id, { variant: 'thumbnail' });
  expect(thumbnail.headers.get('content-type')).toBe('image/png');
  expect(decodePng(Buffer.from(await thumbnail.arrayBuffer()))).toEqual({ width: 96, height: 160 });

  const spec = await gw.api('POST', '/v1/video/retrieve', { token: openai.apiKey!, body: { id: created.id } });
  expect(spec.body).toEqual({ id: created.id, status: 'COMPLETED', url: expect.stringMatching(/\/media\//), credits_used: 30 });
  expect(await gw.balance(acct)).toBe(70);
});

test('image-to-video takes input_reference as an uploaded file or as an image_url; a text model refuses one', async () => {
  const { acct, openai } = await liveClient(100);
  const uploaded = await openai.videos.create({
    model: IMAGE,
    prompt: 'the cat starts to dance',
    size: '854x480' as Size,
    input_reference: await toFile(makePng(64, 48), 'cat.png', { type: 'image/png' }),
  });
  expect(uploaded).toMatchObject({ status: 'queued', seconds: '5', size: '854x480' });
  const byUrl = await openai.videos.create({ model: IMAGE, prompt: 'it jumps', input_reference: { image_url: 'https://93.184.216.34/cat.png' } });
  expect(byUrl).toMatchObject({ size: '1280x720', prompt: 'it jumps' });
  // 5 s image-to-video: 10 credits at 480p, 15 at 720p.
  expect(await gw.balance(acct)).toBe(75);
  expect((await untilDone(openai, uploaded.id)).status).toBe('completed');
  expect((await untilDone(openai, byUrl.id)).status).toBe('completed');

  await expect(
    openai.videos.create({ model: TEXT, prompt: 'x', input_reference: await toFile(makePng(8, 8), 'a.png', { type: 'image/png' }) }),
  ).rejects.toMatchObject({ status: 400, param: 'input_reference' });
  await expect(openai.videos.create({ model: IMAGE, prompt: 'no image' })).rejects.toMatchObject({ status: 400, param: 'input_reference' });
  await expect(
    openai.videos.create({ model: IMAGE, prompt: 'x', input_reference: await toFile(Buffer.from('not an image'), 'a.png', { type: 'image/png' }) }),
  ).rejects.toMatchObject({ status: 400, code: 'invalid_image_format', param: 'input_reference' });
  await expect(openai.videos.create({ model: IMAGE, prompt: 'x', input_reference: { image_url: 'https://127.0.0.1/cat.png' } })).rejects.toMatchObject({
    status: 400,
    param: 'input_reference.image_url',
  });
  expect(await gw.balance(acct)).toBe(75);
});

test('a size that maps to nothing is refused naming size, and so is a duration; nothing is charged', async () => {
  const { acct, openai } = await liveClient(100);
  await expect(openai.videos.create({ model: TEXT, prompt: 'x', size: '1792x1024' })).rejects.toMatchObject({
    status: 400,
    type: 'invalid_request_error',
    param: 'size',
  });
  await expect(openai.videos.create({ model: TEXT, prompt: 'x', seconds: '4' })).rejects.toMatchObject({ status: 400, param: 'seconds' });
  await expect(openai.videos.create({ model: 'sora-2', prompt: 'x' })).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  expect(await gw.balance(acct)).toBe(100);
});

test("creates are permitted and rate-limited as /v1/video/queue's: a chat-only key is refused the model, a sixth create in a minute is a 429", async () => {
  const acct = await gw.newAccount(0);
  const sdk = async (body: Record<string, unknown>) => new OpenAI({ apiKey: (await gw.newKey(acct, body)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const chatOnly = await sdk({ allowedModels: ['svc-chat-1'] });
  await expect(chatOnly.videos.create({ model: TEXT, prompt: 'x' })).rejects.toMatchObject({ status: 403, type: 'model_forbidden', param: 'model' });
  // A test key: free, and limited as a live one is.
  const test = await sdk({ mode: 'test' });
  for (let i = 0; i < 5; i++) expect((await test.videos.create({ model: TEXT, prompt: `free ${i}` })).status).toBe('queued');
  await expect(test.videos.create({ model: TEXT, prompt: 'one too many' })).rejects.toMatchObject({ status: 429, type: 'rate_limit_exceeded' });
  expect(await gw.balance(acct)).toBe(0);
});

test('an Idempotency-Key makes a retried create the same job, charged once', async () => {
  const { acct, openai } = await liveClient(100);
  const options = { headers: { 'Idempotency-Key': `videos-${Date.now()}` } };
  const body = { model: TEXT, prompt: 'once', size: '854x480' as Size };
  const first = await openai.videos.create(body, options);
  const { data: again, response } = await openai.videos.create(body, options).withResponse();
  expect(again.id).toBe(first.id);
  expect(response.headers.get('idempotent-replayed')).toBe('true');
  expect(await gw.balance(acct)).toBe(90);
});

test('list pages newest first with after/has_more, and oldest first with order=asc; delete takes a video and its content from view, refunding nothing', async () => {
  const acct = await gw.newAccount(200);
  // The video rate limit is 5 a minute per key: the account's videos come from two keys, and list shows them all.
  const clients = await Promise.all([0, 1].map(async () => new OpenAI({ apiKey: (await gw.newKey(acct)).secret, baseURL: `${gw.url}/v1`, maxRetries: 0 })));
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push((await clients[i % 2].videos.create({ model: TEXT, prompt: `clip ${i}`, size: '854x480' as Size })).id);
  const [openai] = clients;
  const newestFirst = [...ids].reverse();

  const listed: string[] = [];
  for await (const video of openai.videos.list({ limit: 3 })) listed.push(video.id);
  expect(listed).toEqual(newestFirst);
  const first = await openai.videos.list({ limit: 3 });
  expect(first.data.map((v) => v.id)).toEqual(newestFirst.slice(0, 3));
  expect(first.hasNextPage()).toBe(true);
  const second = await first.getNextPage();
  expect(second.data.map((v) => v.id)).toEqual(newestFirst.slice(3, 6));
  const oldest: string[] = [];
  for await (const video of openai.videos.list({ limit: 4, order: 'asc' })) oldest.push(video.id);
  expect(oldest).toEqual(ids);
  expect(await gw.balance(acct)).toBe(130);

  const gone = ids[3];
  expect((await untilDone(openai, gone)).status).toBe('completed');
  expect(await openai.videos.delete(gone)).toEqual({ id: gone, object: 'video.deleted', deleted: true });
  await expect(openai.videos.retrieve(gone)).rejects.toMatchObject({ status: 404, code: 'job_not_found' });
  await expect(openai.videos.downloadContent(gone)).rejects.toMatchObject({ status: 404 });
  await expect(openai.videos.delete(gone)).rejects.toMatchObject({ status: 404 });
  expect((await gw.api('POST', '/v1/video/retrieve', { token: openai.apiKey!, body: { id: gone } })).status).toBe(404);
  const after: string[] = [];
  for await (const video of openai.videos.list({ limit: 2 })) after.push(video.id);
  expect(after).toEqual(newestFirst.filter((id) => id !== gone));
  // Paging on from the deleted one still works: it marks its place.
  expect((await openai.videos.list({ after: gone })).data.map((v) => v.id)).toEqual(ids.slice(0, 3).reverse());
  expect(await gw.balance(acct)).toBe(130);
});
