/**
 * A retry of a call whose first run committed its work (the job and its charge, or the charge of
 * an answered call) and died before its answer was stored. The instance's death is reproduced as
 * it leaves the database: the claim still running, held by an instance that stopped heartbeating,
 * no response stored. The retry then meets what the first run did not: a spent rate limit (video,
 * motion control, REST and GraphQL) or an account drained to almost nothing (chat, Responses,
 * image generations and edits). Each is answered with the first run's work, before any limit or
 * balance check: one job, one charge, its `x-svc-credits`; after a top-up nothing runs again.
 */
import { ADMIN_TOKEN, type TestAccount } from '../support/gateway-harness';
import { useTestGateway } from '../support/use-test-gateway';
import { makePng } from '../support/fake-openai-upstream';
import { RATE_LIMITS } from '../../src/domain/ratelimit/rate-limiter';

const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '30' });

const VIDEO = { model: 'svc-2.5-preview-text-to-video', prompt: 'a lighthouse', duration: '5s', resolution: '480p' };
const MOTION = { image_url: 'https://example.com/a.png', video_url: 'https://example.com/b.mp4', duration_seconds: 5 };

/** The state a SIGKILL between the commit of the work and the storing of the answer leaves. */
const diedBeforeStoring = (keyId: string, idem: string) =>
  gw.gateway.database.db.run(
    `update idempotency_keys set status_code = null, response_headers = null, response_body = null, holder = 'inst_dead', heartbeat_at = now() - interval '1 hour'
      where api_key_id = ? and idempotency_key = ?`,
    [keyId, idem],
  );

const chargesOf = async (keyId: string) =>
  (
    await gw.gateway.database.db.all<{ request_id: string }>(
      `select request_id from lease_charges where api_key_id = ? union all select reference from ledger_entries where api_key_id = ? and kind = 'charge'`,
      [keyId, keyId],
    )
  ).map((r) => r.request_id);

async function drainTo(acct: TestAccount, leave: number) {
  const balance = await gw.balance(acct);
  const removed = await gw.api('POST', `/admin/accounts/${acct.id}/credits`, {
    token: ADMIN_TOKEN,
    body: { credits: -(Math.round((balance - leave) * 1e6) / 1e6), reason: 'drain' },
  });
  expect(removed.status).toBe(200);
  expect(await gw.balance(acct)).toBeCloseTo(leave, 6);
}

test('video and motion control: a retry after its key spent the video rate limit answers the job the first run queued; REST and GraphQL', async () => {
  const acct = await gw.newAccount(1000);
  const key = await gw.newKey(acct);
  const post = (path: string, body: object, idem?: string) =>
    gw.api('POST', path, { token: key.secret, body, headers: idem ? { 'Idempotency-Key': idem } : {} });
  const QUEUE = `mutation($input: QueueVideoInput!, $k: String) { queueVideo(input: $input, idempotencyKey: $k) { id creditsCharged } }`;
  const gql = (k: string) => gw.api('POST', '/graphql', { token: key.secret, body: { query: QUEUE, variables: { input: VIDEO, k } } });

  const firstVideo = await post('/v1/video/queue', VIDEO, 'v-1');
  const firstMotion = await post('/v1/video/motion-control', MOTION, 'm-1');
  const firstGql = await gql('g-1');
  expect([firstVideo.status, firstMotion.status, firstGql.body.errors]).toEqual([200, 200, undefined]);
  for (const idem of ['v-1', 'm-1', 'g-1']) await diedBeforeStoring(key.id, idem);
  // The key spends the rest of its video limit on other jobs: the next new job is refused.
  for (let i = 3; i < RATE_LIMITS.video; i++) expect((await post('/v1/video/queue', { ...VIDEO, prompt: `other ${i}` })).status).toBe(200);
  const limited = await post('/v1/video/queue', { ...VIDEO, prompt: 'one too many' });
  expect(limited.status).toBe(429);
  expect(limited.body.error.type).toBe('rate_limit_exceeded');
  const balance = await gw.balance(acct);

  const video = await post('/v1/video/queue', VIDEO, 'v-1');
  expect(video.status).toBe(200);
  expect(video.body.id).toBe(firstVideo.body.id);
  expect(video.headers.get('x-svc-credits')).toBe(firstVideo.headers.get('x-svc-credits'));
  const motion = await post('/v1/video/motion-control', MOTION, 'm-1');
  expect(motion.status).toBe(200);
  expect(motion.body.id).toBe(firstMotion.body.id);
  expect(motion.headers.get('x-svc-credits')).toBe(firstMotion.headers.get('x-svc-credits'));
  const viaGql = await gql('g-1');
  expect(viaGql.body.errors).toBeUndefined();
  expect(viaGql.body.data.queueVideo).toEqual(firstGql.body.data.queueVideo);

  // Answered now: replayed from here on, whatever the limit says.
  expect((await post('/v1/video/queue', VIDEO, 'v-1')).headers.get('idempotent-replayed')).toBe('true');
  expect(await gw.balance(acct)).toBe(balance);
  const jobs = await gw.gateway.database.db.all(`select id from video_jobs where api_key_id = ?`, [key.id]);
  expect(jobs).toHaveLength(RATE_LIMITS.video);
  expect((await chargesOf(key.id)).sort()).toEqual(jobs.map((j: any) => j.id).sort());
});

test('chat, Responses, image generations and edits: a retry on an account drained below its hold answers the charged call; after a top-up nothing runs again', async () => {
  const acct = await gw.newAccount(100);
  const key = await gw.newKey(acct);
  const png = makePng(32, 32);
  const edit = (idem: string) => {
    const form = new FormData();
    form.append('model', 'svc-image-edit-1');
    form.append('prompt', 'make it blue');
    form.append('size', '64x64');
    form.append('image', new Blob([png], { type: 'image/png' }), 'in.png');
    return fetch(`${gw.url}/v1/images/edits`, { method: 'POST', headers: { authorization: `Bearer ${key.secret}`, 'idempotency-key': idem }, body: form }).then(
      async (res) => ({
        status: res.status,
        headers: res.headers,
        body: (await res.json()) as any,
      }),
    );
  };
  const json = (path: string, body: object) => (idem: string) => gw.api('POST', path, { token: key.secret, body, headers: { 'Idempotency-Key': idem } });
  const calls: Array<[string, (idem: string) => Promise<{ status: number; headers: Headers; body: any }>]> = [
    ['chat', json('/v1/chat/completions', { model: 'svc-chat-1', messages: [{ role: 'user', content: 'charged once' }], max_tokens: 2000 })],
    ['responses', json('/v1/responses', { model: 'svc-chat-1', input: 'charged once', max_output_tokens: 2000 })],
    ['image', json('/v1/images/generations', { model: 'svc-creative-v8', prompt: 'a red fox', size: '64x64' })],
    ['edit', edit],
  ];
  for (const [name, call] of calls) {
    const first = await call(`${name}-1`);
    expect(first.status).toBe(200);
    const cost = first.headers.get('x-svc-credits');
    expect(Number(cost)).toBeGreaterThan(0);
    await diedBeforeStoring(key.id, `${name}-1`);
    // Too little for the call's hold (the chat's 2,000 tokens, an image's credit): a new call is refused.
    await drainTo(acct, 0.1);
    expect((await call(`${name}-other`)).status).toBe(402);

    const retry = await call(`${name}-1`);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.headers.get('x-svc-credits')).toBe(cost);
    if (name === 'chat') expect(retry.body.id).toBe(first.body.id);
    expect(await gw.balance(acct)).toBeCloseTo(0.1, 6);

    // Topped up, the same key answers what it answered: nothing runs, nothing is charged.
    await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 50, reason: 'top-up' } });
    const replay = await call(`${name}-1`);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(retry.body);
    expect(await gw.balance(acct)).toBeCloseTo(50.1, 6);
  }
  // One charge per call, each the first run's.
  const charges = await chargesOf(key.id);
  expect(charges).toHaveLength(calls.length);
  expect(new Set(charges).size).toBe(calls.length);
});

test('a refusal keeps the claim and its call: the retry after a 402 and a top-up runs as the same call and is charged once', async () => {
  const acct = await gw.newAccount(0);
  const key = await gw.newKey(acct);
  const body = { model: 'svc-chat-1', messages: [{ role: 'user', content: 'the same call' }], max_tokens: 50 };
  const post = () => gw.api('POST', '/v1/chat/completions', { token: key.secret, body, headers: { 'Idempotency-Key': 'refused-first' } });
  const claim = () =>
    gw.gateway.database.db.one<{ call_id: string }>(`select call_id from idempotency_keys where api_key_id = ? and idempotency_key = 'refused-first'`, [
      key.id,
    ]);
  const poor = await post();
  expect(poor.status).toBe(402);
  const callId = (await claim())!.call_id;
  // Another body under the same Idempotency-Key is not this call.
  const other = await gw.api('POST', '/v1/chat/completions', {
    token: key.secret,
    body: { ...body, max_tokens: 51 },
    headers: { 'Idempotency-Key': 'refused-first' },
  });
  expect(other.status).toBe(409);
  expect(other.body.error.code).toBe('idempotency_key_reused');

  await gw.api('POST', `/admin/accounts/${acct.id}/credits`, { token: ADMIN_TOKEN, body: { credits: 10, reason: 'top-up' } });
  const ran = await post();
  expect(ran.status).toBe(200);
  expect(ran.body.id).toBe(`chatcmpl-${callId}`);
  expect((await claim())!.call_id).toBe(callId);
  expect(await chargesOf(key.id)).toEqual([`chatcmpl-${callId}`]);
  expect(await gw.balance(acct)).toBeCloseTo(10 - Number(ran.headers.get('x-svc-credits')), 6);
});
