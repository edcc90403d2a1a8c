/**
 * The video domain on in-memory repositories: a quote names what queueing charges; a queued job is
 * charged in full with its polling row in one transaction (or neither, when the balance is
 * short); a job ends once, a failed one refunded once whoever fails it again; the worker's run of
 * the row submits once and fails a job past its deadline; and a job is read only by its own account.
 */
import { NO_BUDGETS } from '../../../src/domain/credits/budgets';
import { Catalog } from '../../../src/domain/catalog/catalog';
import type { JobEvent, JobEventBus } from '../../../src/domain/events/job-events';
import type { KeyPrincipal } from '../../../src/domain/keys/principal';
import { creditsToMicro } from '../../../src/domain/shared/money';
import { JobFinisher } from '../../../src/domain/video/job-finisher';
import { TIMEOUT_REASON, VideoJobRunner } from '../../../src/domain/video/video-job-runner';
import type { VideoPollResult, VideoProvider, VideoProviders } from '../../../src/domain/video/video-port';
import { VideoService } from '../../../src/domain/video/video-service';
import type { MediaLibrary } from '../../../src/domain/media/media-library';
import { FakeDatabase } from '../../support/fakes/fake-database';
import { FakeVideoJobRepository } from '../../support/fakes/fake-video-jobs';
import { FakeVideoLedger } from '../../support/fakes/fake-video-ledger';
import { FakeWebhookRepository } from '../../support/fakes/fake-webhooks';
import { FakeWorkQueue } from '../../support/fakes/fake-work-queue';

const TIMEOUT_SECONDS = 900;
const FIRST_POLL_SECONDS = 30;
const TEXT_TO_VIDEO = 'svc-2.5-preview-text-to-video';

function keyOf(accountId: string, mode: 'live' | 'test' = 'live', keyId = `key_${accountId}`): KeyPrincipal {
  return { kind: 'key', keyId, accountId, mode, allowedModels: null, blockedModels: null, budgets: NO_BUDGETS };
}

function videoDomain() {
  const db = new FakeDatabase();
  const jobs = new FakeVideoJobRepository(db);
  const queue = new FakeWorkQueue(db);
  const webhooks = new FakeWebhookRepository(db);
  const ledger = new FakeVideoLedger(db);
  const published: JobEvent[] = [];
  const events: JobEventBus = {
    publish: async (e) => void published.push(e),
    subscribe: () => () => undefined,
    close: async () => undefined,
  };
  const submitted: string[] = [];
  let pollAnswer: VideoPollResult = { state: 'processing' };
  const provider: VideoProvider = { submit: async (spec) => ({ queueId: `q_${spec.jobId}` }), poll: async () => pollAnswer };
  const providers: VideoProviders = {
    providerName: (_model, mode) => (mode === 'test' ? 'simulator' : 'upstream'),
    video: () => ({ provider, upstreamModel: 'upstream-model' }),
    submitVideo: async (_model, _provider, spec) => {
      submitted.push(spec.jobId);
      return { queueId: `q_${spec.jobId}`, routeId: 'route-0' };
    },
  };
  const catalog = Catalog.load();
  let nudged = 0;
  const video = new VideoService({
    catalog,
    providers,
    limiter: { consume: async () => ({ allowed: true, limit: 5, remaining: 4, resetSeconds: 60 }) },
    urls: { checkMediaUrl: async (url) => String(url), checkWebhookUrl: async (url) => String(url) },
    jobs,
    queue,
    events,
    timeoutSeconds: TIMEOUT_SECONDS,
    nudge: () => void nudged++,
    ledger,
  });
  const finisher = new JobFinisher(jobs, queue, webhooks, events, ledger);
  const runner = new VideoJobRunner({
    catalog,
    providers,
    jobs,
    queue,
    finisher,
    media: {} as MediaLibrary,
    pollEverySeconds: () => 5,
    firstPollSeconds: () => FIRST_POLL_SECONDS,
  });
  /** Runs the worker's due `video_poll` rows once, as the worker would. */
  const runDuePolls = async () => {
    for (const item of await queue.claim(10)) if (item.kind === 'video_poll') await runner.handle(item);
  };
  return {
    db,
    jobs,
    queue,
    webhooks,
    ledger,
    video,
    finisher,
    published,
    submitted,
    runDuePolls,
    nudges: () => nudged,
    answerPolls: (answer: VideoPollResult) => (pollAnswer = answer),
  };
}

const prompt = { model: TEXT_TO_VIDEO, prompt: 'a lighthouse at dusk', duration: '10s', resolution: '1080p' };

describe('quote and queue', () => {
  test('the quote names the credits queueing then charges: the job is PROCESSING, the balance down by them, its polling row due now', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const quote = d.video.quote(keyOf('acct_a'), { model: TEXT_TO_VIDEO, duration: '10s', resolution: '1080p' });
    expect(quote).toMatchObject({ model: TEXT_TO_VIDEO, duration: '10s', resolution: '1080p', credits: 50 });

    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    expect(job).toMatchObject({ status: 'PROCESSING', accountId: 'acct_a', creditsCharged: quote.credits, model: TEXT_TO_VIDEO });
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(100 - quote.credits));
    expect(d.queue.rows()).toEqual([{ kind: 'video_poll', ref: job.id, payload: {}, dueInSeconds: 0 }]);
    expect(d.published.map((e) => e.job.id)).toEqual([job.id]);
    expect(d.nudges()).toBe(1);
  });

  test('a motion-control quote is its seconds times the per-second price, and queueing it charges that', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const quote = d.video.quote(keyOf('acct_a'), { model: 'svc-v3-motion-control', duration_seconds: 7 });
    expect(quote.credits).toBe(35);
    const { job } = await d.video.motionControl(keyOf('acct_a'), { image_url: 'https://x.test/a.png', video_url: 'https://x.test/b.mp4', duration_seconds: 7 });
    expect(job.creditsCharged).toBe(35);
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(65));
  });

  test('a balance short of the price refuses the job and leaves nothing behind: no charge, no job, no polling row', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(49));
    await expect(d.video.queue(keyOf('acct_a'), prompt)).rejects.toMatchObject({ type: 'insufficient_credits' });
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(49));
    expect(d.ledger.entries('acct_a')).toEqual([]);
    expect(d.queue.rows()).toEqual([]);
    expect((await d.video.list('acct_a', {})).jobs).toEqual([]);
    expect(d.published).toEqual([]);
  });

  test('a job row that cannot be written takes its charge back with it (one transaction)', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    await d.video.queue(keyOf('acct_a'), prompt, { id: 'idem1', resumed: false });
    // The same job id again, not as a resumption: its row exists, so the second charge must not stay.
    await expect(d.video.queue(keyOf('acct_a'), prompt, { id: 'idem1', resumed: false })).rejects.toThrow(/duplicate/);
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(50));
    expect(d.ledger.entries('acct_a').map((e) => e.kind)).toEqual(['charge']);
    expect(d.queue.rows('video_poll')).toHaveLength(1);
  });

  test('a test key queues without a charge', async () => {
    const d = videoDomain();
    const { job } = await d.video.queue(keyOf('acct_a', 'test'), prompt);
    expect(job).toMatchObject({ status: 'PROCESSING', testMode: true, provider: 'simulator' });
    expect(d.ledger.entries('acct_a')).toEqual([]);
    expect(d.queue.rows('video_poll')).toHaveLength(1);
  });

  test('a resumed idempotent call answers the job its first run queued, without a second charge', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const first = await d.video.queue(keyOf('acct_a'), prompt, { id: 'idem1', resumed: false });
    const again = await d.video.queue(keyOf('acct_a'), prompt, { id: 'idem1', resumed: true });
    expect(again.job.id).toBe(first.job.id);
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(50));
  });
});

describe('finishing a job', () => {
  test('completed: COMPLETED with its credits used, no refund, its polling row gone, one event; finishing it again changes nothing', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    const done = await d.finisher.complete(job.id, 'med_1');
    expect(done).toMatchObject({ status: 'COMPLETED', creditsUsed: 50, url: 'https://media.test/med_1.mp4' });
    expect(await d.finisher.fail(job.id, 'late failure')).toBeUndefined();
    expect(await d.finisher.complete(job.id, 'med_2')).toBeUndefined();
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'COMPLETED', url: 'https://media.test/med_1.mp4' });
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(50));
    expect(d.ledger.entries('acct_a').filter((e) => e.kind === 'refund')).toEqual([]);
    expect(d.queue.rows('video_poll')).toEqual([]);
    expect(d.published.map((e) => e.job.status)).toEqual(['PROCESSING', 'COMPLETED']);
  });

  test('failed: refunded once, however many times it is failed again (or completed after)', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    expect(await d.finisher.fail(job.id, 'upstream said no')).toMatchObject({ status: 'FAILED', reason: 'upstream said no', creditsUsed: 0 });
    expect(await d.finisher.fail(job.id, 'upstream said no')).toBeUndefined();
    expect(await d.finisher.complete(job.id, 'med_1')).toBeUndefined();
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(100));
    expect(d.ledger.entries('acct_a').map((e) => e.kind)).toEqual(['charge', 'refund']);
    expect(d.queue.rows('video_poll')).toEqual([]);
  });

  test('a failed test-key job has nothing to refund', async () => {
    const d = videoDomain();
    const { job } = await d.video.queue(keyOf('acct_a', 'test'), prompt);
    expect(await d.finisher.fail(job.id, 'no')).toMatchObject({ status: 'FAILED' });
    expect(d.ledger.entries('acct_a')).toEqual([]);
  });

  test("the end of a job whose key has a webhook schedules its first delivery, with the key's URL and secret, in the same transaction", async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    d.webhooks.setTarget('key_acct_a', { url: 'https://hooks.test/in', secret: 'whsec_1' });
    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    await d.finisher.fail(job.id, 'no');
    const [delivery] = d.queue.rows('webhook_delivery');
    expect(delivery.payload).toMatchObject({ event: 'video.failed', jobId: job.id, url: 'https://hooks.test/in', secret: 'whsec_1', attempt: 1 });
    expect(JSON.parse(delivery.payload.body as string)).toMatchObject({ event: 'video.failed', data: { id: job.id, status: 'FAILED', reason: 'no' } });
  });
});

describe("the worker's runs of a job", () => {
  test('the first run submits the job once and polls it at the expected finish; a failure the provider reports is refunded', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    await d.runDuePolls();
    expect(d.submitted).toEqual([job.id]);
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'PROCESSING', queueId: `q_${job.id}`, routeId: 'route-0' });
    expect(d.queue.rows('video_poll')).toMatchObject([{ dueInSeconds: FIRST_POLL_SECONDS }]);
    d.db.advanceSeconds(FIRST_POLL_SECONDS);
    await d.runDuePolls();
    expect(d.queue.rows('video_poll')).toMatchObject([{ dueInSeconds: 5 }]);
    d.answerPolls({ state: 'failed', reason: 'content policy' });
    d.db.advanceSeconds(5);
    await d.runDuePolls();
    expect(d.submitted).toEqual([job.id]);
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'FAILED', reason: 'content policy' });
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(100));
    expect(d.queue.rows()).toEqual([]);
  });

  test("a job still processing past its deadline fails as 'timeout', refunded", async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    await d.runDuePolls();
    d.db.advanceSeconds(TIMEOUT_SECONDS);
    await d.runDuePolls();
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'FAILED', reason: TIMEOUT_REASON });
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(100));
  });

  test('a run that finds a submission started under an earlier claim and never recorded fails the job rather than submit it again', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    // The first claim marks the row and dies mid-call: its lease runs out, another claim takes it.
    const [first] = await d.queue.claim(1);
    expect(await d.queue.fence(first, { ...first.payload, submitStarted: true })).toBe(true);
    d.db.advanceSeconds(31);
    await d.runDuePolls();
    expect(d.submitted).toEqual([]);
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'FAILED' });
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(100));
  });
});

describe("a job is read against the caller's account", () => {
  test("another account's job answers 404 as a missing one does, and is in none of its lists", async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    expect(await d.video.retrieve(keyOf('acct_a', 'live', 'key_other_of_a'), { id: job.id })).toMatchObject({ id: job.id });
    await expect(d.video.get('acct_b', job.id)).rejects.toMatchObject({ type: 'not_found_error', code: 'job_not_found' });
    await expect(d.video.retrieve(keyOf('acct_b'), { id: job.id })).rejects.toMatchObject({ code: 'job_not_found' });
    await expect(d.video.get('acct_b', 'vid_none')).rejects.toMatchObject({ code: 'job_not_found' });
    expect((await d.video.list('acct_b', {})).jobs).toEqual([]);
    expect(await d.video.changedSince('acct_b', new Date(0))).toEqual([]);
    expect((await d.video.changedSince('acct_a', new Date(0))).map((j) => j.id)).toEqual([job.id]);
  });

  test("a list's cursor must be a job of the caller's account: another's is refused, its own pages on", async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(200));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await d.video.queue(keyOf('acct_a'), prompt)).job.id);
      d.db.advanceSeconds(1);
    }
    const page = await d.video.list('acct_a', { first: 2 });
    expect(page).toMatchObject({ hasNextPage: true });
    expect(page.jobs.map((j) => j.id)).toEqual([ids[2], ids[1]]);
    const rest = await d.video.list('acct_a', { first: 2, after: ids[1] });
    expect(rest.jobs.map((j) => j.id)).toEqual([ids[0]]);
    expect(rest.hasNextPage).toBe(false);
    await expect(d.video.list('acct_b', { after: ids[0] })).rejects.toMatchObject({ type: 'invalid_request_error', param: 'after' });
  });
});
