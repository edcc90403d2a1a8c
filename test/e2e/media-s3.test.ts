/**
 * MEDIA_STORE=s3 against a real S3-protocol server: images and videos go to the bucket and their
 * URLs serve them from it (a video by Range); a bucket that goes down while media are stored is a
 * 503 storage_unavailable with nothing charged (an image), or a job that is stored once the
 * bucket is back, or refunded once at its deadline (a video); what the bucket held before is
 * served again once it is back.
 */
import { S3Client, GetObjectCommand } from '@aws-sdk/client-s3';
import { startTestGateway, type TestAccount, type TestGateway } from '../support/gateway-harness';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';
import { startS3Bucket, type S3Bucket } from '../support/s3-bucket';

vi.setConfig({ testTimeout: 60_000 });

let bucket: S3Bucket;
beforeAll(async () => {
  bucket = await startS3Bucket();
});
// A test that failed with the bucket down leaves it up for the next.
afterEach(async () => {
  if (!bucket.running) await bucket.start();
});
afterAll(async () => {
  await bucket?.close();
});

// A failed work item is claimed again after its lease: 2 s (the webhook timeout must be shorter).
const leases = { WORK_LEASE_SECONDS: '2', WEBHOOK_TIMEOUT_SECONDS: '1', SIMULATOR_VIDEO_SECONDS: '1' };
const gw = useTestGateway(() => ({ ...bucket.env, ...leases }));

const objectUploads = (id: string) => bucket.requests.filter((r) => r.startsWith(`PUT /${bucket.name}/${id}`));
const isObjectPut = (req: { method?: string; url?: string }) => req.method === 'PUT' && (req.url ?? '').startsWith(`/${bucket.name}/med_`);
const mediaId = (url: string) => /\/media\/(med_[A-Za-z0-9]+)\//.exec(url)![1];

async function liveKey(g: TestGateway, credits: number): Promise<{ acct: TestAccount; secret: string }> {
  const acct = await g.newAccount(credits);
  return { acct, secret: (await g.newKey(acct)).secret };
}

const draw = (g: TestGateway, secret: string, prompt: string) =>
  g.api('POST', '/v1/images/generations', { token: secret, body: { model: 'svc-creative-v8', prompt, size: '64x64' } });

const queueVideo = (g: TestGateway, secret: string, prompt: string) =>
  g.api('POST', '/v1/video/queue', { token: secret, body: { model: 'svc-2.5-preview-text-to-video', prompt, resolution: '480p' } });

const untilTerminal = (g: TestGateway, secret: string, id: string) =>
  pollUntil(
    () => g.api('POST', '/v1/video/retrieve', { token: secret, body: { id } }),
    (r) => r.body.status !== 'PROCESSING',
    30_000,
  );

async function ledgerKinds(g: TestGateway, acct: TestAccount, reference: string): Promise<string[]> {
  const res = await g.api('GET', '/account/ledger-entries?first=100', { token: acct.idToken });
  return (res.body.data as { kind: string; reference: string }[])
    .filter((e) => e.reference === reference)
    .map((e) => e.kind)
    .sort();
}

/** How many times the job's `video_poll` row has been claimed. */
async function pollClaims(g: TestGateway, jobId: string): Promise<number> {
  const rows = await g.gateway.database.db.all<{ attempts: number }>(`select attempts from work_items where kind = 'video_poll' and ref = ?`, [jobId]);
  return rows[0]?.attempts ?? 0;
}

let earlierImage: { url: string; bytes: Buffer };

test('an image is stored in the bucket: its URL serves the object the bucket holds', async () => {
  const { secret } = await liveKey(gw, 20);
  const made = await draw(gw, secret, 'a lighthouse');
  expect(made.status).toBe(200);
  const url = made.body.data[0].url as string;
  const id = mediaId(url);
  expect(objectUploads(id)).toHaveLength(1);
  const served = await fetch(url);
  expect(served.status).toBe(200);
  expect(served.headers.get('content-type')).toBe('image/png');
  const bytes = Buffer.from(await served.arrayBuffer());
  // What anyone else with the bucket reads under that id is the same file.
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: bucket.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: bucket.env.AWS_ACCESS_KEY_ID, secretAccessKey: bucket.env.AWS_SECRET_ACCESS_KEY },
  });
  try {
    const got = await client.send(new GetObjectCommand({ Bucket: bucket.name, Key: id }));
    expect(Buffer.from(await got.Body!.transformToByteArray()).equals(bytes)).toBe(true);
  } finally {
    client.destroy();
  }
  // A wrong token is the 404 it is on disk: the check is the gateway's, before the bucket.
  expect((await fetch(url.replace(/\/[^/]+\.png$/, '/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.png'))).status).toBe(404);
  earlierImage = { url, bytes };
});

test('a video is stored in the bucket and served by Range: 206 with Content-Range, the bytes of that range', async () => {
  const { acct, secret } = await liveKey(gw, 30);
  const queued = await queueVideo(gw, secret, 'waves');
  expect(queued.body.credits_charged).toBe(10);
  const done = await untilTerminal(gw, secret, queued.body.id);
  expect(done.body.status).toBe('COMPLETED');
  const url = done.body.url as string;
  expect(objectUploads(mediaId(url))).toHaveLength(1);
  const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
  expect(whole.subarray(4, 8).toString('latin1')).toBe('ftyp');
  const part = await fetch(url, { headers: { range: 'bytes=100-1123' } });
  expect(part.status).toBe(206);
  expect(part.headers.get('content-range')).toBe(`bytes 100-1123/${whole.length}`);
  expect(part.headers.get('content-type')).toBe('video/mp4');
  expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(100, 1124))).toBe(true);
  const tail = await fetch(url, { headers: { range: 'bytes=-10' } });
  expect(Buffer.from(await tail.arrayBuffer()).equals(whole.subarray(whole.length - 10))).toBe(true);
  // The job's own content route reads the same object.
  const content = await fetch(`${gw.url}/v1/videos/${queued.body.id}/content`, { headers: { authorization: `Bearer ${secret}`, range: 'bytes=0-15' } });
  expect(content.status).toBe(206);
  expect(Buffer.from(await content.arrayBuffer()).equals(whole.subarray(0, 16))).toBe(true);
  expect(await gw.balance(acct)).toBe(20);
});

test('the bucket down as an image is uploaded: 503 storage_unavailable, nothing charged; back, earlier media are served and images are charged again', async () => {
  const { acct, secret } = await liveKey(gw, 20);
  const down = bucket.stopOn(isObjectPut);
  const refused = await draw(gw, secret, 'cut off');
  await down;
  expect(refused.status).toBe(503);
  expect(refused.body.error).toMatchObject({ type: 'service_unavailable', code: 'storage_unavailable' });
  expect(refused.headers.get('retry-after')).toBe('30');
  expect(refused.headers.get('x-svc-credits')).toBeNull();
  expect(await gw.balance(acct)).toBe(20);
  // Media asked for while it is down: the same 503, not a 404 (they are not gone).
  const unreadable = await gw.api('GET', new URL(earlierImage.url).pathname);
  expect(unreadable.status).toBe(503);
  expect(unreadable.body.error.code).toBe('storage_unavailable');

  await bucket.start();
  const again = await fetch(earlierImage.url);
  expect(again.status).toBe(200);
  expect(Buffer.from(await again.arrayBuffer()).equals(earlierImage.bytes)).toBe(true);
  const made = await draw(gw, secret, 'back again');
  expect(made.status).toBe(200);
  const spent = Number(made.headers.get('x-svc-credits'));
  expect(spent).toBeGreaterThan(0);
  expect(await gw.balance(acct)).toBe(20 - spent);
});

test('the bucket down as a finished video is stored, back before its deadline: the job completes, charged once and not refunded', async () => {
  const { acct, secret } = await liveKey(gw, 30);
  const down = bucket.stopOn(isObjectPut);
  const queued = await queueVideo(gw, secret, 'held up');
  await down;
  // Up only once the job's work was claimed again after the claim whose store failed, so the
  // store that succeeds is a later claim's, not the failed call retried inside the SDK.
  const claims = () => pollClaims(gw, queued.body.id);
  const failedClaim = await claims();
  await pollUntil(claims, (n) => n > failedClaim, 20_000);
  expect((await gw.api('POST', '/v1/video/retrieve', { token: secret, body: { id: queued.body.id } })).body.status).toBe('PROCESSING');
  await bucket.start();
  const done = await untilTerminal(gw, secret, queued.body.id);
  expect(done.body).toMatchObject({ status: 'COMPLETED', credits_used: 10 });
  expect((await fetch(done.body.url as string)).status).toBe(200);
  expect(await gw.balance(acct)).toBe(20);
  expect(await ledgerKinds(gw, acct, queued.body.id)).toEqual(['charge']);
});

test('the bucket down between a video and its thumbnail: the job completes once, with no medium of the failed attempt left on record', async () => {
  const { acct, secret } = await liveKey(gw, 30);
  let objectPuts = 0;
  const down = bucket.stopOn((req) => isObjectPut(req) && ++objectPuts === 2);
  const queued = await queueVideo(gw, secret, 'no thumbnail yet');
  await down;
  const failedClaim = await pollClaims(gw, queued.body.id);
  await pollUntil(
    () => pollClaims(gw, queued.body.id),
    (n) => n > failedClaim,
    20_000,
  );
  await bucket.start();
  const done = await untilTerminal(gw, secret, queued.body.id);
  expect(done.body.status).toBe('COMPLETED');
  const thumbnail = await fetch(`${gw.url}/v1/videos/${queued.body.id}/content?variant=thumbnail`, { headers: { authorization: `Bearer ${secret}` } });
  expect(thumbnail.status).toBe(200);
  const kept = await gw.gateway.database.db.all<{ content_type: string }>(`select content_type from media_objects where account_id = ? order by content_type`, [
    acct.id,
  ]);
  expect(kept.map((m) => m.content_type)).toEqual(['image/png', 'video/mp4']);
  expect(await gw.balance(acct)).toBe(20);
});

test('the bucket down from a finished video to its deadline: FAILED (timeout), refunded exactly once', async () => {
  const short = await startTestGateway({ ...bucket.env, ...leases, VIDEO_JOB_TIMEOUT_SECONDS: '4' });
  try {
    const { acct, secret } = await liveKey(short, 30);
    const down = bucket.stopOn(isObjectPut);
    const queued = await queueVideo(short, secret, 'never stored');
    expect(await short.balance(acct)).toBe(20);
    await down;
    const done = await untilTerminal(short, secret, queued.body.id);
    expect(done.body).toEqual({ id: queued.body.id, status: 'FAILED', reason: 'timeout' });
    expect(await short.balance(acct)).toBe(30);
    expect(await ledgerKinds(short, acct, queued.body.id)).toEqual(['charge', 'refund']);
    await expectLedgerInvariants(short.gateway.database.db);
  } finally {
    await short.close();
  }
});
