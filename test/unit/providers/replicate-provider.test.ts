import type { DomainError } from '../../../src/domain/errors/domain-error';
import { ReplicateProvider } from '../../../src/providers/replicate';
import { videoFailureReason } from '../../../src/providers/replicate/failure-reason';
import { downloadOutput, progressFromLogs } from '../../../src/providers/replicate/prediction-output';
import { classifyAttemptFailure } from '../../../src/providers/shared/attempt-failure';
import type { ImageGenerationRequest, VideoJobSpec } from '../../../src/providers/ports';
import { plainFetchMedia } from '../../support/fake-fal-upstream';
import { FAKE_REPLICATE_VIDEO, FAKE_RETRY_AFTER, type FakeReplicateUpstream, startFakeReplicateUpstream } from '../../support/fake-replicate-upstream';
import { decodePng } from '../../support/png';
import { pollUntil } from '../../support/poll';

const TOKEN = 'r8_test_token_0123456789abcdef';
const IMAGE_MODEL = 'black-forest-labs/flux-schnell';
const VIDEO_MODEL = 'kwaivgi/kling-v2.1';

const image = (overrides: Partial<ImageGenerationRequest> = {}): ImageGenerationRequest => ({
  upstreamModel: IMAGE_MODEL,
  prompt: 'a lighthouse at dusk',
  n: 2,
  width: 64,
  height: 48,
  creative: false,
  ...overrides,
});

const spec = (overrides: Partial<VideoJobSpec> = {}): VideoJobSpec => ({
  jobId: 'vid_1',
  upstreamModel: VIDEO_MODEL,
  kind: 'video',
  prompt: 'a cat surfing',
  durationSeconds: 5,
  resolution: '720p',
  aspectRatio: '16:9',
  imageUrl: 'https://example.com/cat.png',
  ...overrides,
});

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    return error as DomainError;
  }
  throw new Error('expected a rejection');
}

/** What any thrown error may show: nothing of the token, the fake's address or its words. */
function expectClean(error: DomainError, type: string): void {
  expect(error.type).toBe(type);
  for (const text of [error.message, JSON.stringify(error), String((error.cause as Error | undefined)?.message ?? '')]) {
    expect(text).not.toContain(TOKEN);
  }
  expect(error.message).not.toMatch(/127\.0\.0\.1|https?:/);
}

describe('ReplicateProvider', () => {
  let fake: FakeReplicateUpstream;
  let provider: ReplicateProvider;
  const open: ReplicateProvider[] = [];
  const make = (options: Partial<ConstructorParameters<typeof ReplicateProvider>[0]> = {}) => {
    const made = new ReplicateProvider({ baseUrl: fake.url, apiKey: TOKEN, timeoutMs: 3000, pollIntervalMs: 20, fetchMedia: plainFetchMedia, ...options });
    open.push(made);
    return made;
  };
  const api = () => fake.requests.filter((r) => r.path.startsWith('/v1/'));

  beforeAll(async () => {
    fake = await startFakeReplicateUpstream({ token: TOKEN });
    provider = make();
  });
  afterAll(async () => {
    await Promise.all(open.map((p) => p.close()));
    await fake.close();
  });
  beforeEach(() => fake.reset());

  describe('images', () => {
    it('answers within the sync wait with every output downloaded', async () => {
      fake.setScript({ finishAfterMs: 20 });
      const images = await provider.generate(image());

      expect(images).toHaveLength(2);
      for (const img of images) {
        expect(img.contentType).toBe('image/png');
        expect(decodePng(img.data)).toEqual({ width: 64, height: 48 });
      }
      const [create, ...rest] = api();
      expect(rest).toEqual([]);
      expect(create.method).toBe('POST');
      expect(create.path).toBe(`/v1/models/${IMAGE_MODEL}/predictions`);
      expect(create.headers.authorization).toBe(`Bearer ${TOKEN}`);
      // timeoutMs 3000: the wait leaves a second for polling or cancelling.
      expect(create.headers.prefer).toBe('wait=2');
      expect(create.headers['cancel-after']).toBe('3s');
      expect(create.body).toEqual({ input: { prompt: 'a lighthouse at dusk', num_outputs: 2, width: 64, height: 48 } });
    });

    it('sends the optional fields, and disables the safety checker only for the creative group', async () => {
      fake.setScript({ finishAfterMs: 0 });
      await provider.generate(image({ n: 1, seed: 42, negativePrompt: 'fog', creative: true }));
      expect(api()[0].body.input).toEqual({
        prompt: 'a lighthouse at dusk',
        num_outputs: 1,
        width: 64,
        height: 48,
        seed: 42,
        negative_prompt: 'fog',
        disable_safety_checker: true,
      });
    });

    it('creates a pinned version through the predictions endpoint', async () => {
      fake.setScript({ finishAfterMs: 0 });
      await provider.generate(image({ upstreamModel: 'stability-ai/sdxl:39ed52f2a78e', n: 1 }));
      const [create] = api();
      expect(create.path).toBe('/v1/predictions');
      expect(create.body.version).toBe('39ed52f2a78e');
    });

    it('polls a prediction that outlasts the wait to completion', async () => {
      fake.setScript({ maxWaitMs: 30, finishAfterPolls: 3 });
      const images = await provider.generate(image({ n: 1 }));
      expect(images).toHaveLength(1);
      const gets = api().filter((r) => r.method === 'GET');
      expect(gets.map((r) => r.path)).toEqual(Array(4).fill('/v1/predictions/p1'));
      for (const r of gets) expect(r.headers.authorization).toBe(`Bearer ${TOKEN}`);
    });

    it('keeps polling through transient failures', async () => {
      fake.setScript({ maxWaitMs: 10, finishAfterPolls: Infinity });
      const generation = provider.generate(image({ n: 1 }));
      await pollUntil(
        async () => fake.predictions.get('p1')?.polls ?? 0,
        (n) => n >= 1,
        5000,
        10,
      );
      await fake.setMode('500');
      const errorsSeen = fake.requests.length;
      await pollUntil(
        async () => fake.requests.length,
        (n) => n >= errorsSeen + 2,
        5000,
        10,
      );
      await fake.setMode('ok');
      fake.complete('p1');
      expect(await generation).toHaveLength(1);
    });

    it('answers no more images than asked for', async () => {
      // A model that ignores num_outputs (or has none) may answer more.
      fake.setScript({ finishAfterMs: 0, imageCount: 4 });
      expect(await provider.generate(image({ n: 3 }))).toHaveLength(3);
    });

    it('turns an NSFW failure into content_policy_violation', async () => {
      fake.setScript({ finishAfterMs: 0, outcome: 'failed', error: 'NSFW content detected. Try running it again, or try a different prompt.' });
      const error = await rejection(provider.generate(image()));
      expectClean(error, 'content_policy_violation');
    });

    it('reports any other failure as an upstream_error in words of ours', async () => {
      fake.setScript({ finishAfterMs: 0, outcome: 'failed', error: `CUDA out of memory; see https://logs.example/run?token=${TOKEN}` });
      const error = await rejection(provider.generate(image()));
      expectClean(error, 'upstream_error');
      expect(error.message).not.toMatch(/CUDA/);
    });

    it('reports a canceled prediction as an upstream_error', async () => {
      fake.setScript({ finishAfterMs: 0, outcome: 'canceled' });
      expectClean(await rejection(provider.generate(image())), 'upstream_error');
    });

    it('gives up at its deadline, cancels the prediction and says it timed out', async () => {
      const quick = make({ timeoutMs: 400 });
      fake.setScript({ finishAfterPolls: Infinity });
      const error = await rejection(quick.generate(image()));
      expectClean(error, 'upstream_error');
      expect(error.message).toMatch(/did not answer in time/);
      expect(classifyAttemptFailure(error)).toMatchObject({ retryable: true, surelyNotAccepted: false });
      // Under two seconds of timeout leaves no room for a sync wait.
      expect(api()[0].headers.prefer).toBeUndefined();
      await pollUntil(
        async () => fake.predictions.get('p1')?.status,
        (s) => s === 'canceled',
        5000,
        10,
      );
    });

    it('cancels the prediction when the caller aborts', async () => {
      fake.setScript({ maxWaitMs: 10, finishAfterPolls: Infinity });
      const abort = new AbortController();
      const generation = provider.generate(image({ signal: abort.signal }));
      await pollUntil(
        async () => fake.predictions.get('p1')?.polls ?? 0,
        (n) => n >= 1,
        5000,
        10,
      );
      abort.abort();
      expectClean(await rejection(generation), 'upstream_error');
      await pollUntil(
        async () => fake.predictions.get('p1')?.status,
        (s) => s === 'canceled',
        5000,
        10,
      );
      expect(api().some((r) => r.method === 'POST' && r.path === '/v1/predictions/p1/cancel')).toBe(true);
    });

    it('fails when an output cannot be downloaded', async () => {
      fake.setScript({ finishAfterMs: 0, mediaMissing: true });
      const error = await rejection(provider.generate(image()));
      expectClean(error, 'upstream_error');
      expect(error.message).toMatch(/could not be downloaded/);
    });
  });

  describe('video', () => {
    const poll = (queueId: string, jobSpec = spec()) => provider.poll({ queueId, submittedAt: new Date(), spec: jobSpec });

    it('submits without waiting, polls with progress and downloads the finished video', async () => {
      fake.setScript({ finishAfterPolls: 2 });
      const { queueId } = await provider.submit(spec({ audio: true }));
      expect(queueId).toBe('p1');
      expect(provider.submitIsRepeatable).toBe(false);

      const [create] = api();
      expect(create.path).toBe(`/v1/models/${VIDEO_MODEL}/predictions`);
      expect(create.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(create.headers.prefer).toBeUndefined();
      expect(create.body).toEqual({
        input: { prompt: 'a cat surfing', duration: 5, resolution: '720p', aspect_ratio: '16:9', image: 'https://example.com/cat.png', generate_audio: true },
      });

      const first = await poll(queueId);
      const second = await poll(queueId);
      expect(first).toEqual({ state: 'processing', progress: 33 });
      expect(second).toEqual({ state: 'processing', progress: 67 });
      const done = await poll(queueId);
      expect(done).toEqual({ state: 'completed', video: { data: FAKE_REPLICATE_VIDEO, contentType: 'video/mp4' } });
    });

    it('maps the motion-control fields', async () => {
      await provider.submit(
        spec({
          kind: 'motion-control',
          prompt: undefined,
          resolution: undefined,
          aspectRatio: undefined,
          durationSeconds: 10,
          videoUrl: 'https://example.com/dance.mp4',
          referenceImageUrls: ['https://example.com/a.png'],
          keepOriginalSound: true,
          characterOrientation: 'video',
        }),
      );
      expect(api()[0].body.input).toEqual({
        duration: 10,
        image: 'https://example.com/cat.png',
        reference_images: ['https://example.com/a.png'],
        video: 'https://example.com/dance.mp4',
        keep_original_sound: true,
        character_orientation: 'video',
      });
    });

    it('reports a failed prediction with a short reason of ours', async () => {
      fake.setScript({ finishAfterPolls: 0, outcome: 'failed', error: `Failed to download image from https://cdn.example/cat.png?token=${TOKEN}: HTTP 403` });
      const { queueId } = await provider.submit(spec());
      const result = await poll(queueId);
      expect(result).toEqual({ state: 'failed', reason: 'The provider could not download a source file (image / video); the link may have expired.' });
    });

    it.each([
      ['NSFW content detected.', /content-policy/],
      ['The input or output was flagged as sensitive. Please try again with different inputs. (E005)', /content-policy/],
      ['Prediction timed out after 1800 seconds', /timed out/],
      ['ValueError: duration must be one of [5, 10]', /rejected the job's input/],
      ['Traceback (most recent call last):\n  File "/src/predict.py", line 88\nRuntimeError: boom', /^The video provider failed to generate the video\.$/],
      [null, /^The video provider failed to generate the video\.$/],
    ])('maps the failure %j to a short reason', (error, reason) => {
      const text = videoFailureReason(error);
      expect(text).toMatch(reason);
      expect(text).not.toMatch(/https?:|\/src\/|Traceback/);
    });

    it('decodes an output sent inline as a data: URI instead of fetching it', async () => {
      const fetchMedia = vi.fn(plainFetchMedia);
      const media = await downloadOutput(`data:video/mp4;base64,${FAKE_REPLICATE_VIDEO.toString('base64')}`, fetchMedia);
      expect(media).toEqual({ data: FAKE_REPLICATE_VIDEO, contentType: 'video/mp4' });
      expect(fetchMedia).not.toHaveBeenCalled();
    });

    it('reads the last progress bar of the logs', () => {
      expect(progressFromLogs('loading\n 10%|█         | 2/20\n 45%|████▌     | 9/20')).toBe(45);
      expect(progressFromLogs('no bar yet')).toBeUndefined();
      expect(progressFromLogs(null)).toBeUndefined();
    });

    it("reports a canceled prediction as 'cancelled', after cancel() reached the cancel endpoint", async () => {
      fake.setScript({ finishAfterPolls: Infinity });
      const { queueId } = await provider.submit(spec());
      await expect(provider.cancel({ queueId, spec: spec() })).resolves.toBeUndefined();
      expect(api().at(-1)).toMatchObject({ method: 'POST', path: `/v1/predictions/${queueId}/cancel` });
      expect(api().at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(await poll(queueId)).toEqual({ state: 'failed', reason: 'cancelled' });
      // An unknown prediction is Replicate's last word too: nothing to ask again.
      await expect(provider.cancel({ queueId: 'p-unknown', spec: spec() })).resolves.toBeUndefined();
      await fake.setMode('500');
      await expect(provider.cancel({ queueId, spec: spec() })).rejects.toMatchObject({ type: 'upstream_error' });
      await fake.setMode('ok');
    });

    it('reports a prediction the provider no longer knows as failed', async () => {
      expect(await poll('p404')).toEqual({ state: 'failed', reason: 'The provider no longer knows this job.' });
    });

    it.each([
      ['without an output', { output: 'none' as const }, /without producing a video/],
      ['whose file cannot be downloaded', { mediaMissing: true }, /could not be downloaded/],
    ])('reports a succeeded prediction %s as failed', async (_what, script, reason) => {
      fake.setScript({ finishAfterPolls: 0, ...script });
      const { queueId } = await provider.submit(spec());
      expect(await poll(queueId)).toEqual({ state: 'failed', reason: expect.stringMatching(reason) });
    });

    it.each(['500', '429', 'reset'] as const)('keeps a job processing while its poll meets %s', async (mode) => {
      fake.setScript({ finishAfterPolls: 0 });
      const { queueId } = await provider.submit(spec());
      await fake.setMode(mode);
      expect(await poll(queueId)).toEqual({ state: 'processing' });
      await fake.setMode('ok');
      expect((await poll(queueId)).state).toBe('completed');
    });

    it.each(['500', '429'] as const)('throws a retryable, surely-not-accepted error for a %s submit', async (mode) => {
      await fake.setMode(mode);
      const error = await rejection(provider.submit(spec()));
      expectClean(error, 'upstream_error');
      const failure = classifyAttemptFailure(error);
      expect(failure).toMatchObject({ retryable: true, surelyNotAccepted: true, summary: `HTTP ${mode}` });
      if (mode === '429') expect(failure.retryAfterSeconds).toBe(Number(FAKE_RETRY_AFTER));
      expect(fake.predictions.size).toBe(0);
    });

    it('throws a surely-not-accepted error when the connection is refused', async () => {
      // A fresh adapter: one with a pooled connection would first see that connection closed.
      const fresh = make();
      await fake.setMode('refuse');
      const error = await rejection(fresh.submit(spec()));
      expectClean(error, 'upstream_error');
      expect(classifyAttemptFailure(error)).toMatchObject({ retryable: true, surelyNotAccepted: true, summary: 'ECONNREFUSED' });
    });

    it('throws a maybe-accepted error when the answer to a create is lost', async () => {
      await fake.setMode('lose-answer');
      const error = await rejection(provider.submit(spec()));
      expectClean(error, 'upstream_error');
      expect(classifyAttemptFailure(error)).toMatchObject({ retryable: true, surelyNotAccepted: false });
      // The fake did create it: a second submit would run (and bill) the job twice.
      expect(fake.predictions.size).toBe(1);
    });

    it('throws a maybe-accepted error when the connection is reset after the request', async () => {
      await fake.setMode('reset');
      const error = await rejection(provider.submit(spec()));
      expect(classifyAttemptFailure(error)).toMatchObject({ retryable: true, surelyNotAccepted: false });
    });

    it('throws a maybe-accepted timeout when the create is never answered', async () => {
      const quick = make({ timeoutMs: 200 });
      await fake.setMode('stall');
      const error = await rejection(quick.submit(spec()));
      expectClean(error, 'upstream_error');
      expect(error.message).toMatch(/did not answer in time/);
      expect(classifyAttemptFailure(error)).toMatchObject({ retryable: true, surelyNotAccepted: false, summary: 'timeout' });
    });

    it('never shows the token when the provider refuses it', async () => {
      const wrong = make({ apiKey: `${TOKEN}-wrong` });
      const error = await rejection(wrong.submit(spec()));
      expectClean(error, 'upstream_error');
      expect(error.message).not.toContain(`${TOKEN}-wrong`);
      expect(classifyAttemptFailure(error)).toMatchObject({ retryable: false, surelyNotAccepted: true, summary: 'HTTP 401' });
      expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}-wrong`);
    });
  });
});
