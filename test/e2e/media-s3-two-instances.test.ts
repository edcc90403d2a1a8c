/**
 * Two gateway processes with data directories of their own on one PostgreSQL, one Redis and one
 * S3-protocol bucket (MEDIA_STORE=s3): media made on one are served by the other, a video by
 * Range; a bucket that goes down mid-upload is a 503 storage_unavailable with nothing charged, and
 * both serve what it held once it is back. Needs real servers: CI's second pass.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildGateway, type ChildGateway } from '../support/child-gateway';
import { freePort } from '../support/free-port';
import { pollUntil } from '../support/poll';
import { startS3Bucket, type S3Bucket } from '../support/s3-bucket';
import { createScratchDatabase } from '../../src/infra/db/scratch-database';
import { postgresTemplate } from '../support/database-template';

const shared = process.env.DATABASE_URL && process.env.REDIS_URL ? describe : describe.skip;
vi.setConfig({ testTimeout: 120_000 });

shared('two instances on one bucket', () => {
  let bucket: S3Bucket;
  let scratch: Awaited<ReturnType<typeof createScratchDatabase>> | undefined;
  const dataDirs = [mkdtempSync(join(tmpdir(), 'gw-s3-a-')), mkdtempSync(join(tmpdir(), 'gw-s3-b-'))];
  let a: ChildGateway | undefined;
  let b: ChildGateway | undefined;
  let liveKey: string;
  let idToken: string;

  beforeAll(async () => {
    bucket = await startS3Bucket();
    scratch = await createScratchDatabase(process.env.DATABASE_URL!, 'gw_s3_two', postgresTemplate());
    const env = { DATABASE_URL: scratch.url, REDIS_URL: process.env.REDIS_URL, SIMULATOR_VIDEO_SECONDS: '1', ...bucket.env };
    // A serves requests only; B runs all the work (so a video is stored by B and asked of A).
    a = await startChildGateway({ ...env, DATA_DIR: dataDirs[0], WORKER_CONCURRENCY: '0' }, await freePort());
    b = await startChildGateway({ ...env, DATA_DIR: dataDirs[1] }, await freePort());
    const out = await pollUntil(
      async () => a!.output() + b!.output(),
      (o) => o.includes('live key:'),
      20_000,
      50,
    );
    liveKey = /live key:\s+(\S+)/.exec(out)![1];
    idToken = /ID token:\s+(\S+)/.exec(out)![1];
  });

  afterEach(async () => {
    if (!bucket.running) await bucket.start();
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await bucket?.close();
    await scratch?.drop();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  const post = (gw: ChildGateway, path: string, body: unknown) =>
    fetch(`${gw.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${liveKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const draw = (gw: ChildGateway, prompt: string) => post(gw, '/v1/images/generations', { model: 'svc-creative-v8', prompt, size: '64x64' });
  const balance = async (gw: ChildGateway) =>
    ((await (await fetch(`${gw.url}/account`, { headers: { authorization: `Bearer ${idToken}` } })).json()) as { balance: number }).balance;
  /** The same media URL on the other instance's origin. */
  const on = (gw: ChildGateway, url: string) => gw.url + new URL(url).pathname;
  const bytes = async (res: Response) => Buffer.from(await res.arrayBuffer());
  const mediaFiles = () =>
    dataDirs.flatMap((dir) => readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.startsWith('med_')));

  let earlier: { url: string; data: Buffer };

  test('an image made on A is served by B, the same bytes; neither keeps it on its disk', async () => {
    const made = await draw(a!, 'a harbour');
    expect(made.status).toBe(200);
    const url = ((await made.json()) as { data: { url: string }[] }).data[0].url;
    expect(url.startsWith(a!.url)).toBe(true);
    const fromA = await fetch(url);
    const fromB = await fetch(on(b!, url));
    expect([fromA.status, fromB.status]).toEqual([200, 200]);
    expect(fromB.headers.get('content-type')).toBe('image/png');
    const data = await bytes(fromA);
    expect((await bytes(fromB)).equals(data)).toBe(true);
    expect(mediaFiles()).toEqual([]);
    earlier = { url, data };
  });

  test('a video queued on A and stored by B is served by A with Range: 206, Content-Range, the bytes of the range', async () => {
    const queued = (await (await post(a!, '/v1/video/queue', { model: 'svc-2.5-preview-text-to-video', prompt: 'tide', resolution: '480p' })).json()) as {
      id: string;
    };
    const done = await pollUntil(
      async () => (await (await post(a!, '/v1/video/retrieve', { id: queued.id })).json()) as { status: string; url?: string },
      (r) => r.status !== 'PROCESSING',
      30_000,
    );
    expect(done.status).toBe('COMPLETED');
    const whole = await bytes(await fetch(on(b!, done.url!)));
    expect(whole.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const part = await fetch(on(a!, done.url!), { headers: { range: 'bytes=64-575' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 64-575/${whole.length}`);
    expect((await bytes(part)).equals(whole.subarray(64, 576))).toBe(true);
  });

  test('the bucket down mid-upload: 503 storage_unavailable, nothing charged; back, both serve what it held', async () => {
    const before = await balance(b!);
    const down = bucket.stopOn((req) => req.method === 'PUT' && (req.url ?? '').startsWith(`/${bucket.name}/med_`));
    const refused = await draw(a!, 'cut off');
    await down;
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('30');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('storage_unavailable');
    expect(await balance(b!)).toBe(before);
    expect((await fetch(on(b!, earlier.url))).status).toBe(503);

    await bucket.start();
    for (const gw of [a!, b!]) {
      const res = await fetch(on(gw, earlier.url));
      expect(res.status).toBe(200);
      expect((await bytes(res)).equals(earlier.data)).toBe(true);
    }
    const made = await draw(b!, 'back');
    expect(made.status).toBe(200);
    expect(await balance(a!)).toBe(before - Number(made.headers.get('x-svc-credits')));
  });
});
