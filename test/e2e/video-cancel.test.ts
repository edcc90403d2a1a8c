/**
 * Cancelling a running job, through each door: POST /v1/videos/<id>/cancel with the `openai`
 * SDK's own request method, POST /v1/video/cancel, and GraphQL cancelVideoJob watched by a
 * videoJobUpdated subscription. Each ends FAILED with reason `cancelled`, refunded once, with one
 * `video.failed` webhook; a terminal job answers 409 `video_not_cancellable`. Against the fal and
 * Replicate fakes, the job's progress comes from their logs and the cancel reaches their cancel
 * endpoints. The simulator here takes ten minutes, so every job is still running when cancelled.
 */
import WebSocket from 'ws';
import OpenAI from 'openai';
import { createClient, type Client } from 'graphql-ws';
import { startFakeFalUpstream, type FakeFalUpstream } from '../support/fake-fal-upstream';
import { startFakeReplicateUpstream, type FakeReplicateUpstream } from '../support/fake-replicate-upstream';
import type { TestAccount } from '../support/gateway-harness';
import { writeModelsFile } from '../support/models-file';
import { pollUntil } from '../support/poll';
import { useTestGateway } from '../support/use-test-gateway';
import { startWebhookReceiver } from '../support/webhook-receiver';

const TEXT = 'svc-2.5-preview-text-to-video';
const FAL_MODEL = 'svc-2.5-preview-image-to-video';
const REPLICATE_MODEL = 'svc-2-7-image-to-video';

let fal: FakeFalUpstream;
let replicate: FakeReplicateUpstream;
let models: { path: string; remove: () => void };
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
beforeAll(async () => {
  fal = await startFakeFalUpstream();
  replicate = await startFakeReplicateUpstream();
  receiver = await startWebhookReceiver();
  models = writeModelsFile({
    [FAL_MODEL]: { provider: 'fal-queue', upstreamModel: 'fal-ai/fake-video', baseUrl: fal.url, timeoutSeconds: 5 },
    [REPLICATE_MODEL]: { provider: 'replicate', upstreamModel: 'owner/fake-video', baseUrl: replicate.url, timeoutSeconds: 5 },
  });
});
const gw = useTestGateway(() => ({
  SIMULATOR_VIDEO_SECONDS: '600',
  MODELS_FILE: models.path,
  VIDEO_POLL_SECONDS: '0.2',
  WEBHOOK_ALLOW_LOCAL: '1',
}));
afterAll(async () => {
  await fal.close();
  await replicate.close();
  await receiver.close();
  models.remove();
});

async function liveKey(credits: number): Promise<{ acct: TestAccount; secret: string }> {
  const acct = await gw.newAccount(credits);
  const key = await gw.newKey(acct);
  const hook = await gw.api('PATCH', `/account/api-keys/${key.id}/webhook`, { token: acct.idToken, body: { url: receiver.url } });
  receiver.verifyWith([hook.body.secret]);
  return { acct, secret: key.secret };
}

const retrieve = (secret: string, id: string) => gw.api('POST', '/v1/video/retrieve', { token: secret, body: { id } });
const queue = (secret: string, body: Record<string, unknown>) => gw.api('POST', '/v1/video/queue', { token: secret, body });
/** Until the worker has handed the job to its provider. */
const untilSubmitted = (secret: string, id: string) =>
  pollUntil(
    () => gw.api('GET', `/v1/videos/${id}`, { token: secret }),
    (r) => r.body.status === 'in_progress',
  );
/** The job's webhook events once nothing of them is left to send. */
async function eventsOf(jobId: string) {
  await pollUntil(
    async () =>
      Number(
        (await gw.gateway.database.db.one<{ n: string }>(`select count(*) as n from work_items where kind = 'webhook_delivery' and payload->>'jobId' = ?`, [
          jobId,
        ]))!.n,
      ),
    (n) => n === 0,
  );
  return receiver.received.filter((e) => e.body.data.id === jobId);
}

test('the SDK cancels a running video: failed with code cancelled, refunded once, one video.failed webhook; a second cancel is 409', async () => {
  const { acct, secret } = await liveKey(100);
  const openai = new OpenAI({ apiKey: secret, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const created = await openai.videos.create({ model: TEXT, prompt: 'a slow sunrise', size: '854x480' as OpenAI.Videos.VideoSize });
  expect(await gw.balance(acct)).toBe(90);
  const running = (await untilSubmitted(secret, created.id)).body;
  expect(running.progress).toBeGreaterThanOrEqual(0);
  expect(running.progress).toBeLessThan(100);

  const cancelled = await openai.post<OpenAI.Videos.Video>(`/videos/${created.id}/cancel`);
  expect(cancelled).toMatchObject({ id: created.id, status: 'failed', error: { code: 'cancelled', message: expect.any(String) } });
  expect(await gw.balance(acct)).toBe(100);
  expect((await retrieve(secret, created.id)).body).toEqual({ id: created.id, status: 'FAILED', reason: 'cancelled' });
  await expect(openai.post(`/videos/${created.id}/cancel`)).rejects.toMatchObject({
    status: 409,
    type: 'video_not_cancellable',
    code: 'video_not_cancellable',
  });
  const events = await eventsOf(created.id);
  expect(events.map((e) => [e.body.event, e.body.data.reason])).toEqual([['video.failed', 'cancelled']]);
  expect(await gw.balance(acct)).toBe(100);
});

test('POST /v1/video/cancel cancels a queued job; GET /v1/video/jobs lists it FAILED; a job of another account is 404', async () => {
  const { acct, secret } = await liveKey(100);
  const queued = await queue(secret, { model: TEXT, prompt: 'x', resolution: '480p' });
  const res = await gw.api('POST', '/v1/video/cancel', { token: secret, body: { id: queued.body.id } });
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ id: queued.body.id, status: 'FAILED', reason: 'cancelled' });
  expect(await gw.balance(acct)).toBe(100);
  const again = await gw.api('POST', '/v1/video/cancel', { token: secret, body: { id: queued.body.id } });
  expect([again.status, again.body.error.type]).toEqual([409, 'video_not_cancellable']);
  const jobs = await gw.api('GET', '/v1/video/jobs?status=FAILED', { token: secret });
  expect(jobs.body).toMatchObject({ object: 'list', has_more: false, next_cursor: null });
  expect(jobs.body.data).toEqual([
    expect.objectContaining({ id: queued.body.id, status: 'FAILED', reason: 'cancelled', credits_charged: 10, credits_used: 0 }),
  ]);
  const stranger = await liveKey(0);
  expect((await gw.api('POST', '/v1/video/cancel', { token: stranger.secret, body: { id: queued.body.id } })).status).toBe(404);
  expect((await gw.api('GET', '/v1/video/jobs', { token: stranger.secret })).body.data).toEqual([]);
});

test('GraphQL cancelVideoJob: the videoJobUpdated subscription sees the job FAILED once, then completes', async () => {
  const { acct, secret } = await liveKey(100);
  const clients: Client[] = [];
  const connect = () => {
    const client = createClient({
      url: `${gw.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${secret}` },
    });
    clients.push(client);
    return client;
  };
  try {
    const queued = await queue(secret, { model: TEXT, prompt: 'watched', resolution: '480p' });
    await untilSubmitted(secret, queued.body.id);
    const results: any[] = [];
    const ended = new Promise<void>((resolve, reject) =>
      connect().subscribe(
        { query: 'subscription($id: ID!) { videoJobUpdated(id: $id) { id status reason progress } }', variables: { id: queued.body.id } },
        { next: (r) => void results.push(r), error: reject, complete: resolve },
      ),
    );
    await pollUntil(
      async () => results.length,
      (n) => n >= 1,
    );
    const mutation = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${acct.idToken}` },
      body: JSON.stringify({ query: 'mutation($id: ID!) { cancelVideoJob(id: $id) { id status reason progress } }', variables: { id: queued.body.id } }),
    });
    const answer = (await mutation.json()) as any;
    expect(answer.data.cancelVideoJob).toMatchObject({ id: queued.body.id, status: 'FAILED', reason: 'cancelled' });
    await ended;
    const states = results.map((r) => r.data.videoJobUpdated.status);
    expect(states.filter((s) => s === 'FAILED')).toHaveLength(1);
    expect(states.at(-1)).toBe('FAILED');
    expect(states.slice(0, -1).every((s) => s === 'PROCESSING')).toBe(true);
    expect(await gw.balance(acct)).toBe(100);
    // Terminal now: the mutation answers the REST type as its code.
    const second = await fetch(`${gw.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ query: 'mutation($id: ID!) { cancelVideoJob(id: $id) { id } }', variables: { id: queued.body.id } }),
    });
    expect(((await second.json()) as any).errors[0].extensions.code).toBe('video_not_cancellable');
  } finally {
    await Promise.all(clients.map((c) => c.dispose()));
  }
});

test("a job at the fal fake reports the progress of its logs, and a cancel reaches fal's cancel endpoint", async () => {
  fal.setMode({ submit: 'ok', outcome: 'completed', pollsBeforeDone: 1_000_000 });
  const { acct, secret } = await liveKey(100);
  const queued = await queue(secret, { model: FAL_MODEL, image_url: 'https://93.184.216.34/cat.png', resolution: '480p' });
  const moving = await pollUntil(
    () => retrieve(secret, queued.body.id),
    (r) => r.body.progress > 0,
  );
  expect(moving.body).toEqual({ id: queued.body.id, status: 'PROCESSING', progress: expect.any(Number) });
  const res = await gw.api('POST', `/v1/videos/${queued.body.id}/cancel`, { token: secret });
  expect(res.body).toMatchObject({ status: 'failed', error: { code: 'cancelled' } });
  await pollUntil(
    async () => fal.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/cancel')).length,
    (n) => n === 1,
  );
  expect(await gw.balance(acct)).toBe(100);
  expect((await eventsOf(queued.body.id)).map((e) => e.body.event)).toEqual(['video.failed']);
});

test("a job at the Replicate fake reports the progress of its logs, and a cancel reaches Replicate's cancel endpoint", async () => {
  replicate.setScript({ finishAfterPolls: Infinity });
  const { acct, secret } = await liveKey(100);
  const queued = await queue(secret, { model: REPLICATE_MODEL, image_url: 'https://93.184.216.34/cat.png', resolution: '480p' });
  await pollUntil(
    () => retrieve(secret, queued.body.id),
    (r) => r.body.progress > 0,
  );
  const res = await gw.api('POST', '/v1/video/cancel', { token: secret, body: { id: queued.body.id } });
  expect(res.body).toEqual({ id: queued.body.id, status: 'FAILED', reason: 'cancelled' });
  const prediction = await pollUntil(
    async () => [...replicate.predictions.values()].find((p) => p.status === 'canceled'),
    (p) => p !== undefined,
  );
  expect(replicate.requests.filter((r) => r.method === 'POST' && r.path === `/v1/predictions/${prediction!.id}/cancel`)).toHaveLength(1);
  expect(await gw.balance(acct)).toBe(100);
  expect((await eventsOf(queued.body.id)).map((e) => e.body.event)).toEqual(['video.failed']);
});
