import { reasonFromUpstreamError } from '../../../src/providers/fal-queue/failure-reason';
import { FalQueueVideoProvider } from '../../../src/providers/fal-queue';
import { progressOfStatus } from '../../../src/providers/fal-queue/fal-progress';
import type { VideoJobSpec, VideoPollResult } from '../../../src/providers/ports';
import { FAKE_VIDEO_BYTES, type FakeFalUpstream, plainFetchMedia, startFakeFalUpstream } from '../../support/fake-fal-upstream';

const API_KEY = 'fal-secret-key-abc';
const MODEL = 'fal-ai/some-video/v2/image-to-video';

const spec = (overrides: Partial<VideoJobSpec> = {}): VideoJobSpec => ({
  jobId: 'vid_1',
  upstreamModel: MODEL,
  kind: 'video',
  prompt: 'a cat surfing',
  durationSeconds: 5,
  resolution: '720p',
  aspectRatio: '16:9',
  audio: true,
  imageUrl: 'https://example.com/cat.png',
  ...overrides,
});

describe('FalQueueVideoProvider', () => {
  let fal: FakeFalUpstream;
  let provider: FalQueueVideoProvider;

  beforeAll(async () => {
    fal = await startFakeFalUpstream();
    provider = new FalQueueVideoProvider({ baseUrl: `${fal.url}/`, apiKey: API_KEY, timeoutMs: 2000, fetchMedia: plainFetchMedia });
  });
  afterAll(async () => {
    await provider.close();
    await fal.close();
  });
  beforeEach(() => {
    fal.setMode({ submit: 'ok', outcome: 'completed', pollsBeforeDone: 2 });
    fal.requests.length = 0;
  });

  /** Polls until a terminal state (or gives up after a few rounds). */
  async function pollToEnd(queueId: string, jobSpec: VideoJobSpec): Promise<{ results: VideoPollResult[] }> {
    const results: VideoPollResult[] = [];
    for (let i = 0; i < 6; i++) {
      const result = await provider.poll({ queueId, submittedAt: new Date(), spec: jobSpec });
      results.push(result);
      if (result.state !== 'processing') break;
    }
    return { results };
  }

  it('submits, polls through the queue and downloads the finished video', async () => {
    const jobSpec = spec();
    const { queueId } = await provider.submit(jobSpec);
    expect(queueId).toMatch(/^req-/);

    const [submit] = fal.requests;
    expect(submit.method).toBe('POST');
    expect(submit.path).toBe(`/${MODEL}`);
    expect(submit.headers.authorization).toBe(`Key ${API_KEY}`);
    expect(submit.json).toEqual({
      prompt: 'a cat surfing',
      duration: '5',
      resolution: '720p',
      aspect_ratio: '16:9',
      generate_audio: true,
      image_url: 'https://example.com/cat.png',
    });

    const { results } = await pollToEnd(queueId, jobSpec);
    expect(results.map((r) => r.state)).toEqual(['processing', 'processing', 'completed']);
    // In the queue: 0%; running: the percentage its logs printed last.
    expect(results.slice(0, 2)).toEqual([
      { state: 'processing', progress: 0 },
      { state: 'processing', progress: 20 },
    ]);
    const done = results.at(-1) as Extract<VideoPollResult, { state: 'completed' }>;
    expect(done.video.contentType).toBe('video/mp4');
    expect(done.video.data.equals(FAKE_VIDEO_BYTES)).toBe(true);

    const paths = fal.requests.map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain(`GET /${MODEL}/requests/${queueId}/status?logs=1`);
    expect(paths).toContain(`GET /${MODEL}/requests/${queueId}`);
    for (const r of fal.requests.filter((r) => !r.path.startsWith('/media/'))) {
      expect(r.headers.authorization).toBe(`Key ${API_KEY}`);
    }
  });

  it('cancels a running request at its cancel URL; a finished or unknown one is its last word too', async () => {
    fal.setMode({ pollsBeforeDone: 10 });
    const jobSpec = spec();
    const { queueId } = await provider.submit(jobSpec);
    await expect(provider.cancel({ queueId, spec: jobSpec })).resolves.toBeUndefined();
    expect(fal.requests.at(-1)).toMatchObject({ method: 'PUT', path: `/${MODEL}/requests/${queueId}/cancel` });
    expect(fal.requests.at(-1)!.headers.authorization).toBe(`Key ${API_KEY}`);
    // Cancelled once: asked again, fal answers 400 ALREADY_COMPLETED, which is no reason to ask a third time.
    await expect(provider.cancel({ queueId, spec: jobSpec })).resolves.toBeUndefined();
    await expect(provider.cancel({ queueId: 'req-unknown', spec: jobSpec })).resolves.toBeUndefined();
    const unreachable = new FalQueueVideoProvider({ baseUrl: 'http://127.0.0.1:1', timeoutMs: 2000, fetchMedia: plainFetchMedia });
    await expect(unreachable.cancel({ queueId, spec: jobSpec })).rejects.toMatchObject({ type: 'upstream_error' });
    await unreachable.close();
  });

  it('reads the progress of a running request from the last percentage of its logs', () => {
    expect(progressOfStatus({ status: 'IN_QUEUE', queue_position: 4 })).toBe(0);
    expect(
      progressOfStatus({ status: 'IN_PROGRESS', logs: [{ message: 'step 3 of 10: 30%' }, { message: ' 45.7%|████▌ | 9/20' }, { message: 'saving' }] }),
    ).toBe(45);
    expect(progressOfStatus({ status: 'IN_PROGRESS', logs: [{ message: 'loading weights' }] })).toBeUndefined();
    expect(progressOfStatus({ status: 'IN_PROGRESS' })).toBeUndefined();
  });

  it('maps the motion-control fields', async () => {
    await provider.submit(
      spec({
        kind: 'motion-control',
        upstreamModel: 'fal-ai/motion',
        prompt: undefined,
        resolution: undefined,
        aspectRatio: undefined,
        audio: undefined,
        durationSeconds: 10,
        videoUrl: 'https://example.com/dance.mp4',
        keepOriginalSound: true,
        characterOrientation: 'video',
        referenceImageUrls: ['https://example.com/a.png'],
      }),
    );
    expect(fal.requests[0].json).toEqual({
      duration: '10',
      image_url: 'https://example.com/cat.png',
      reference_image_urls: ['https://example.com/a.png'],
      video_url: 'https://example.com/dance.mp4',
      keep_original_sound: true,
      character_orientation: 'video',
    });
  });

  it('reports FAILED status as failed with a short reason free of URLs and secrets', async () => {
    fal.setMode({ outcome: 'failed', pollsBeforeDone: 0 });
    const jobSpec = spec();
    const { queueId } = await provider.submit(jobSpec);
    const result = await provider.poll({ queueId, submittedAt: new Date(), spec: jobSpec });
    expect(result.state).toBe('failed');
    const { reason } = result as { reason: string };
    expect(reason).toMatch(/could not generate the video/);
    expect(reason).not.toMatch(/https?:|secret-token/);
    expect(reason).not.toContain(API_KEY);
    expect(reason.length).toBeLessThan(250);
  });

  it("keeps a provider's file paths, addresses and links out of a failure reason, and its words in", () => {
    const reason = reasonFromUpstreamError({
      message: 'worker crashed; see http://10.0.0.5/logs?token=SECRET123 at /opt/fal/worker.py line 3 (C:\\fal\\run.py) from 10.0.0.5:8080, out of memory 1/2',
    });
    expect(reason).toBe('The provider could not generate the video: worker crashed; see [url] at [path] line 3 ([path] from [address], out of memory 1/2');
    const more = reasonFromUpstreamError(
      'node gpu-node-17.internal:8080 lost its cache at [fd00::1]:6379 (fe80::1ff:fe23); key sk-live-ABCDEF0123456789 rejected at 10:30',
    );
    expect(more).toBe('The provider could not generate the video: node [host] lost its cache at [address] ([address]); key [redacted] rejected at 10:30');
  });

  it.each([
    ['result-422', /could not download a source file/],
    ['no-video', /without producing a video/],
    ['media-missing', /could not be downloaded/],
  ] as const)('reports %s as failed', async (outcome, reason) => {
    fal.setMode({ outcome, pollsBeforeDone: 0 });
    const jobSpec = spec();
    const { queueId } = await provider.submit(jobSpec);
    const result = await provider.poll({ queueId, submittedAt: new Date(), spec: jobSpec });
    expect(result).toEqual({ state: 'failed', reason: expect.stringMatching(reason) });
  });

  it('keeps a job processing while its status answers 5xx (the job deadline ends it)', async () => {
    fal.setMode({ outcome: 'status-500', pollsBeforeDone: 0 });
    const jobSpec = spec();
    const { queueId } = await provider.submit(jobSpec);
    await expect(provider.poll({ queueId, submittedAt: new Date(), spec: jobSpec })).resolves.toEqual({ state: 'processing' });
  });

  it('keeps a job processing while the upstream is unreachable', async () => {
    const gone = await startFakeFalUpstream();
    await gone.close();
    const orphan = new FalQueueVideoProvider({ baseUrl: gone.url, apiKey: API_KEY, timeoutMs: 300, fetchMedia: plainFetchMedia });
    await expect(orphan.poll({ queueId: 'req-1', submittedAt: new Date(), spec: spec() })).resolves.toEqual({ state: 'processing' });
    await expect(orphan.submit(spec())).rejects.toMatchObject({ type: 'upstream_error' });
    await orphan.close();
  });

  it('reports a job the upstream does not know as failed', async () => {
    const result = await provider.poll({ queueId: 'req-unknown', submittedAt: new Date(), spec: spec() });
    expect(result.state).toBe('failed');
  });

  it.each(['error-500', 'malformed-json'] as const)('throws upstream_error when submit answers %s', async (submit) => {
    fal.setMode({ submit });
    const error = await provider.submit(spec()).catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'upstream_error' });
    expect((error as Error).message).not.toContain(API_KEY);
  });

  it('throws content_policy_violation when submit is refused on content grounds', async () => {
    fal.setMode({ submit: 'content-policy' });
    await expect(provider.submit(spec())).rejects.toMatchObject({ type: 'content_policy_violation' });
  });
});
