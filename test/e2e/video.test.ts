import { execFileSync } from 'node:child_process';
import { startTestGateway, type TestAccount } from '../support/gateway-harness';
import { expectLedgerInvariants } from '../support/ledger-invariants';
import { useTestGateway } from '../support/use-test-gateway';
import { pollUntil } from '../support/poll';

const gw = useTestGateway({ SIMULATOR_VIDEO_SECONDS: '1' });

async function liveKey(credits: number, body: Record<string, unknown> = {}): Promise<{ acct: TestAccount; secret: string }> {
  const acct = await gw.newAccount(credits);
  return { acct, secret: (await gw.newKey(acct, body)).secret };
}

const retrieve = (secret: string, id: string) => gw.api('POST', '/v1/video/retrieve', { token: secret, body: { id } });
const untilTerminal = (secret: string, id: string) =>
  pollUntil(
    () => retrieve(secret, id),
    (r) => r.body.status !== 'PROCESSING',
  );

function hasFfprobe(): boolean {
  try {
    execFileSync('ffprobe', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('quotes', () => {
  test('prices come from the catalog: 10 credits for 5s 480p up to 55 for 10s 1080p image-to-video', async () => {
    const { secret } = await liveKey(0);
    const q = (body: object) => gw.api('POST', '/v1/video/quote', { token: secret, body });
    const low = await q({ model: 'svc-2.5-preview-text-to-video', duration: '5s', resolution: '480p' });
    expect(low.status).toBe(200);
    expect(low.body).toMatchObject({ model: 'svc-2.5-preview-text-to-video', duration: '5s', resolution: '480p', credits: 10 });
    expect(low.body.estimatedCostUsd.member).toBeCloseTo(low.body.estimatedCostUsd.nonMember / 1.55, 12);
    const high = await q({ model: 'svc-2-7-image-to-video', duration: '10s', resolution: '1080p' });
    expect(high.body.credits).toBe(55);
    const motion = await q({ model: 'svc-v3-motion-control', duration_seconds: 5 });
    expect(motion.body.credits).toBe(25);
    // The dollar figure is the price in dollars, not its floating-point product (35 × 0.01 was 0.35000000000000003).
    for (const seconds of [7, 14, 19, 23, 28]) {
      const quote = (await q({ model: 'svc-v3-motion-control', duration_seconds: seconds })).body;
      expect(quote.estimatedCostUsd.nonMember).toBe((seconds * 5) / 100);
      expect(quote.estimatedCostUsd.member).toBeCloseTo(quote.estimatedCostUsd.nonMember / 1.55, 12);
    }
    const bad = await q({ model: 'svc-2-7-image-to-video', duration: '7s', resolution: '1080p' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('duration');
  });
});

describe('video jobs', () => {
  test('queue, poll to COMPLETED and fetch a playable MP4 from a permanent URL', async () => {
    const { acct, secret } = await liveKey(100);
    const queued = await gw.api('POST', '/v1/video/queue', {
      token: secret,
      body: {
        model: 'svc-2.5-preview-text-to-video',
        prompt: 'a paper boat on a river',
        duration: '5s',
        resolution: '720p',
        aspect_ratio: '16:9',
        audio: true,
      },
    });
    expect(queued.status).toBe(200);
    expect(queued.body).toEqual({
      id: expect.stringMatching(/^vid_/),
      queue_id: expect.any(String),
      model: 'svc-2.5-preview-text-to-video',
      status: 'PROCESSING',
      credits_charged: 15,
    });
    expect(queued.headers.get('x-ratelimit-limit-requests')).toBe('5');
    // Charged in full when accepted, and the billing header says what moved, as on every billed call.
    expect(queued.headers.get('x-svc-credits')).toBe('15');
    expect(await gw.balance(acct)).toBe(85);
    // Not yet handed to the simulator, or at the share of its time gone by.
    expect((await retrieve(secret, queued.body.id)).body).toEqual({ id: queued.body.id, status: 'PROCESSING', progress: expect.any(Number) });

    const done = await untilTerminal(secret, queued.body.id);
    expect(done.body).toEqual({ id: queued.body.id, status: 'COMPLETED', url: expect.stringMatching(new RegExp(`^${gw.url}/media/`)), credits_used: 15 });
    const video = await fetch(done.body.url);
    expect(video.status).toBe(200);
    expect(video.headers.get('content-type')).toBe('video/mp4');
    const bytes = Buffer.from(await video.arrayBuffer());
    expect(bytes.subarray(4, 8).toString('latin1')).toBe('ftyp');
    if (hasFfprobe()) {
      const probe = execFileSync('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_name', '-of', 'csv=p=0', '-i', 'pipe:0'], {
        input: bytes,
      }).toString();
      expect(probe).toContain('h264');
    }
    expect(await gw.balance(acct)).toBe(85);
  });

  test('[fail] ends FAILED with a reason and the charge is refunded', async () => {
    const { acct, secret } = await liveKey(30);
    const queued = await gw.api('POST', '/v1/video/queue', {
      token: secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'this one will [fail]', resolution: '480p' },
    });
    expect(queued.body.credits_charged).toBe(10);
    expect(await gw.balance(acct)).toBe(20);
    const done = await untilTerminal(secret, queued.body.id);
    expect(done.body).toEqual({ id: queued.body.id, status: 'FAILED', reason: expect.any(String) });
    expect(await gw.balance(acct)).toBe(30);
  });

  test('motion control for 5 s costs 25 credits and completes; any key of the account can poll it', async () => {
    const { acct, secret } = await liveKey(30);
    const res = await gw.api('POST', '/v1/video/motion-control', {
      token: secret,
      body: {
        image_url: 'https://93.184.216.34/character.png',
        video_url: 'https://93.184.216.34/dance.mp4',
        duration_seconds: 5,
        character_orientation: 'video',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ model: 'svc-v3-motion-control', status: 'PROCESSING', credits_charged: 25 });
    expect(res.headers.get('x-svc-credits')).toBe('25');
    expect(await gw.balance(acct)).toBe(5);
    const otherKey = await gw.newKey(acct);
    const done = await untilTerminal(otherKey.secret, res.body.id);
    expect(done.body.status).toBe('COMPLETED');
  });

  test("another account's job id answers 404", async () => {
    const owner = await liveKey(20);
    const queued = await gw.api('POST', '/v1/video/queue', {
      token: owner.secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'x', resolution: '480p' },
    });
    const stranger = await liveKey(0);
    const res = await retrieve(stranger.secret, queued.body.id);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatchObject({ type: 'not_found_error' });
  });

  test('a test key runs the whole job without touching the balance', async () => {
    const acct = await gw.newAccount(0);
    const key = await gw.newKey(acct, { mode: 'test' });
    const queued = await gw.api('POST', '/v1/video/queue', {
      token: key.secret,
      body: { model: 'svc-2-7-reference-to-video', prompt: 'x', reference_image_urls: ['https://93.184.216.34/a.png'] },
    });
    expect(queued.status).toBe(200);
    expect(queued.body.credits_charged).toBe(18);
    expect((await untilTerminal(key.secret, queued.body.id)).body.status).toBe('COMPLETED');
    expect(await gw.balance(acct)).toBe(0);
  });

  test('402 when the balance does not cover the price; 403 for a blocked video model', async () => {
    const poor = await liveKey(5);
    const res = await gw.api('POST', '/v1/video/queue', {
      token: poor.secret,
      body: { model: 'svc-2.5-preview-text-to-video', prompt: 'x', resolution: '480p' },
    });
    expect(res.status).toBe(402);
    expect(res.body.error.type).toBe('insufficient_credits');
    const chatOnly = await liveKey(100, { allowedModels: ['svc-chat-1'] });
    const forbidden = await gw.api('POST', '/v1/video/queue', { token: chatOnly.secret, body: { model: 'svc-2.5-preview-text-to-video', prompt: 'x' } });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.type).toBe('model_forbidden');
    const motion = await gw.api('POST', '/v1/video/motion-control', {
      token: chatOnly.secret,
      body: { image_url: 'https://93.184.216.34/a.png', video_url: 'https://93.184.216.34/b.mp4', duration_seconds: 2 },
    });
    expect(motion.status).toBe(403);
  });

  test('validation errors name the field; nothing is charged', async () => {
    const { acct, secret } = await liveKey(100);
    const cases: [string, object, string][] = [
      ['/v1/video/queue', { model: 'svc-9', prompt: 'x' }, 'model'],
      ['/v1/video/queue', { model: 'svc-2.5-preview-text-to-video' }, 'prompt'],
      ['/v1/video/queue', { model: 'svc-2.5-preview-text-to-video', prompt: 'x'.repeat(5001) }, 'prompt'],
      ['/v1/video/queue', { model: 'svc-2.5-preview-text-to-video', prompt: 'x', resolution: '4k' }, 'resolution'],
      ['/v1/video/queue', { model: 'svc-2.5-preview-text-to-video', prompt: 'x', aspect_ratio: '2:1' }, 'aspect_ratio'],
      ['/v1/video/queue', { model: 'svc-2.5-preview-text-to-video', prompt: 'x', audio: 'yes' }, 'audio'],
      ['/v1/video/queue', { model: 'svc-2-7-image-to-video', prompt: 'x' }, 'image_url'],
      ['/v1/video/queue', { model: 'svc-2-7-reference-to-video', prompt: 'x' }, 'reference_image_urls'],
      [
        '/v1/video/queue',
        { model: 'svc-2-7-reference-to-video', prompt: 'x', reference_image_urls: Array(5).fill('https://93.184.216.34/a.png') },
        'reference_image_urls',
      ],
      [
        '/v1/video/queue',
        { model: 'svc-2-7-reference-to-video', prompt: 'x', reference_image_urls: ['https://93.184.216.34/a.png', 'ftp://x/y'] },
        'reference_image_urls[1]',
      ],
      ['/v1/video/queue', { model: 'svc-2.5-preview-text-to-video', prompt: 'x', colour: 'red' }, 'colour'],
      [
        '/v1/video/motion-control',
        { image_url: 'https://93.184.216.34/a.png', video_url: 'https://93.184.216.34/b.mp4', duration_seconds: 31 },
        'duration_seconds',
      ],
      ['/v1/video/motion-control', { image_url: 'https://93.184.216.34/a.png', duration_seconds: 3 }, 'video_url'],
      [
        '/v1/video/motion-control',
        { image_url: 'https://93.184.216.34/a.png', video_url: 'https://93.184.216.34/b.mp4', duration_seconds: 3, character_orientation: 'left' },
        'character_orientation',
      ],
      ['/v1/video/retrieve', {}, 'id'],
    ];
    for (const [path, body, param] of cases) {
      const res = await gw.api('POST', path, { token: secret, body });
      expect([path, param, res.status]).toEqual([path, param, param === 'model' ? 404 : 400]);
      expect(res.body.error.param).toBe(param);
    }
    expect(await gw.balance(acct)).toBe(100);
  });

  test('source URLs at loopback, metadata, private or plain-http-with-credentials addresses are refused with 400', async () => {
    const { acct, secret } = await liveKey(100);
    const bad = [
      'https://127.0.0.1/a.png',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/a.png',
      'https://10.1.2.3/a.png',
      'https://localhost/a.png',
      'https://user:pw@93.184.216.34/a.png',
      'file:///etc/passwd',
    ];
    for (const url of bad) {
      const res = await gw.api('POST', '/v1/video/queue', { token: secret, body: { model: 'svc-2-7-image-to-video', prompt: 'x', image_url: url } });
      expect([url, res.status, res.body.error?.param]).toEqual([url, 400, 'image_url']);
    }
    const motion = await gw.api('POST', '/v1/video/motion-control', {
      token: secret,
      body: { image_url: 'https://93.184.216.34/a.png', video_url: 'https://192.168.0.10/b.mp4', duration_seconds: 2 },
    });
    expect(motion.body.error.param).toBe('video_url');
    expect(await gw.balance(acct)).toBe(100);
  });

  test('the sixth video request in a minute answers 429; polling is not limited', async () => {
    const acct = await gw.newAccount(0);
    const key = await gw.newKey(acct, { mode: 'test' });
    let last: Awaited<ReturnType<typeof gw.api>> | undefined;
    for (let i = 0; i < 6; i++)
      last = await gw.api('POST', '/v1/video/queue', { token: key.secret, body: { model: 'svc-2.5-preview-text-to-video', prompt: `clip ${i}` } });
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    const jobs = await gw.gateway.database.db.all<{ id: string }>(`select id from video_jobs where account_id = ?`, [acct.id]);
    for (let i = 0; i < 20; i++) expect((await retrieve(key.secret, jobs[0].id)).status).toBe(200);
  });
});

describe('deadlines', () => {
  test('a job still PROCESSING at VIDEO_JOB_TIMEOUT_SECONDS ends FAILED (timeout) and is refunded', async () => {
    const slow = await startTestGateway({ SIMULATOR_VIDEO_SECONDS: '30', VIDEO_JOB_TIMEOUT_SECONDS: '1' });
    try {
      const acct = await slow.newAccount(20);
      const key = await slow.newKey(acct);
      const queued = await slow.api('POST', '/v1/video/queue', {
        token: key.secret,
        body: { model: 'svc-2.5-preview-text-to-video', prompt: 'x', resolution: '480p' },
      });
      const done = await pollUntil(
        () => slow.api('POST', '/v1/video/retrieve', { token: key.secret, body: { id: queued.body.id } }),
        (r) => r.body.status !== 'PROCESSING',
      );
      expect(done.body).toEqual({ id: queued.body.id, status: 'FAILED', reason: 'timeout' });
      expect(await slow.balance(acct)).toBe(20);
      await expectLedgerInvariants(slow.gateway.database.db);
    } finally {
      await slow.close();
    }
  });
});
