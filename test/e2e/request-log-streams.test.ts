/**
 * The request log of streamed images and of /v1/videos creates: a stream that reaches its image
 * is a row charged the image, carried by its charge; one its client leaves, or whose upstream
 * fails, after a preview is a row charged nothing, saying how it ended. A /v1/videos create, JSON
 * or multipart with an uploaded reference, is a row of its job, charged as the job was; a refused
 * create is a row of its refusal.
 */
import { allCallsBilled } from '../support/billed';
import { makePng, startFakeOpenAIUpstream, type FakeOpenAIUpstream } from '../support/fake-openai-upstream';
import type { TestAccount } from '../support/gateway-harness';
import { writeModelsFile } from '../support/models-file';
import { useTestGateway } from '../support/use-test-gateway';

let upstream: FakeOpenAIUpstream;
let models: ReturnType<typeof writeModelsFile>;
beforeAll(async () => {
  upstream = await startFakeOpenAIUpstream();
  models = writeModelsFile({
    'svc-creative-v7': { provider: 'openai-compatible', upstreamModel: 'up-v7', baseUrl: upstream.url, apiKeyEnv: 'UPSTREAM_IMG_KEY', timeoutSeconds: 5 },
  });
});
const gw = useTestGateway(() => ({ MODELS_FILE: models.path, UPSTREAM_IMG_KEY: 'sk-img-upstream-1234', SIMULATOR_VIDEO_SECONDS: '0.2' }));
afterAll(async () => {
  await upstream.close();
  models.remove();
});
afterEach(() => upstream.setMode('ok'));

/** The account's rows (the writer's flushed first), by request id. */
async function rows(acct: TestAccount): Promise<Map<string, any>> {
  await gw.gateway.services.requestLog.flush();
  const res = await gw.api('GET', '/account/requests?first=100', { token: acct.idToken });
  expect(res.status).toBe(200);
  return new Map(res.body.data.map((r: { id: string }) => [r.id, r]));
}

const requestId = (res: { headers: Headers }) => res.headers.get('x-request-id')!;
const usage = (images: number, seconds = 0) => ({ promptTokens: 0, completionTokens: 0, images, seconds });

/** Starts a streamed generation, answering the response (its body unread). */
function streamImage(secret: string, model: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, prompt: 'a lighthouse', size: '64x64', stream: true, partial_images: 2 }),
    signal,
  });
}

test('a streamed image charged at its completion, one abandoned after a preview and one whose upstream died: a row each, as it ended', async () => {
  const acct = await gw.newAccount(20);
  const key = await gw.newKey(acct);
  const completed = await streamImage(key.secret, 'svc-creative-v8');
  const text = await completed.text();
  expect(text).toContain('image_generation.completed');

  upstream.setMode('held-stream');
  const abort = new AbortController();
  const abandoned = await streamImage(key.secret, 'svc-creative-v7', abort.signal);
  const reader = abandoned.body!.getReader();
  let seen = '';
  while (!seen.includes('image_generation.partial_image')) seen += Buffer.from((await reader.read()).value!).toString('utf8');
  abort.abort();
  await allCallsBilled(gw, acct.id);
  upstream.releaseHeld();

  upstream.setMode('die-mid-stream');
  const died = await streamImage(key.secret, 'svc-creative-v7');
  expect(await died.text()).toContain('event: error');
  await allCallsBilled(gw, acct.id);

  const log = await rows(acct);
  expect(log.get(requestId(completed))).toMatchObject({
    endpoint: '/v1/images/generations',
    model: 'svc-creative-v8',
    status: 200,
    credits: 1,
    usage: usage(1),
    error: null,
  });
  expect(log.get(requestId(abandoned))).toMatchObject({ model: 'svc-creative-v7', status: 200, credits: 0, usage: usage(0), error: { type: 'client_closed' } });
  expect(log.get(requestId(died))).toMatchObject({ model: 'svc-creative-v7', status: 200, credits: 0, usage: usage(0), error: { type: 'upstream_error' } });
  expect(20 - (await gw.balance(acct))).toBe(1);
});

test('/v1/videos creates, JSON and multipart with an uploaded reference, are rows of their jobs; a refused one, of its refusal', async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct);
  const json = await gw.api('POST', '/v1/videos', {
    token: key.secret,
    body: { model: 'svc-2.5-preview-text-to-video', prompt: 'waves', seconds: '5', size: '854x480' },
  });
  const form = new FormData();
  form.append('model', 'svc-2.5-preview-image-to-video');
  form.append('prompt', 'the hat flies off');
  form.append('seconds', '10');
  form.append('size', '854x480');
  form.append('input_reference', new Blob([makePng(32, 32)], { type: 'image/png' }), 'in.png');
  const multipart = await fetch(`${gw.url}/v1/videos`, { method: 'POST', headers: { authorization: `Bearer ${key.secret}` }, body: form });
  const multipartBody = (await multipart.json()) as { id: string };
  const refused = await gw.api('POST', '/v1/videos', { token: key.secret, body: { model: 'svc-2.5-preview-text-to-video', prompt: 'waves', size: '7x7' } });
  expect([json.status, multipart.status, refused.status]).toEqual([200, 200, 400]);
  await allCallsBilled(gw, acct.id);

  const log = await rows(acct);
  expect(log.get(requestId(json))).toMatchObject({
    endpoint: '/v1/videos',
    model: 'svc-2.5-preview-text-to-video',
    jobId: json.body.id,
    credits: Number(json.headers.get('x-svc-credits')),
    usage: usage(0, 5),
  });
  expect(log.get(requestId(multipart))).toMatchObject({
    endpoint: '/v1/videos',
    model: 'svc-2.5-preview-image-to-video',
    jobId: multipartBody.id,
    credits: Number(multipart.headers.get('x-svc-credits')),
    usage: usage(0, 10),
  });
  expect(log.get(requestId(refused))).toMatchObject({ status: 400, credits: 0, jobId: null, error: { type: 'invalid_request_error' } });
  const sum = [...log.values()].reduce((s, r) => s + r.credits, 0);
  expect(sum).toBeGreaterThan(0);
  expect(sum).toBeCloseTo(100 - (await gw.balance(acct)), 6);
});
