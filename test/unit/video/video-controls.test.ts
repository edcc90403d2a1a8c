/**
 * What an owner does to a job, on in-memory repositories: a cancel ends a PROCESSING job FAILED
 * `cancelled`, refunded once, and has its upstream told (also when the job was still being
 * submitted); a cancel and a completion that race end in one state with the money right; a
 * delete takes an ended job and its media from view; progress reported by a poll is kept and
 * published once per change.
 */
import { creditsToMicro } from '../../../src/domain/shared/money';
import type { VideoPollResult } from '../../../src/domain/video/video-port';
import { TEXT_TO_VIDEO, keyOf, videoDomain } from '../../support/fakes/video-domain';

const prompt = { model: TEXT_TO_VIDEO, prompt: 'a lighthouse at dusk', duration: '5s', resolution: '480p' };
const PRICE = 10;
const completed: VideoPollResult = {
  state: 'completed',
  video: { data: Buffer.from('mp4'), contentType: 'video/mp4' },
  thumbnail: { data: Buffer.from('png'), contentType: 'image/png' },
};

/** A promise the test resolves when it chooses. */
function gate(): { wait: () => Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { wait: () => opened, open };
}

async function submittedJob(d: ReturnType<typeof videoDomain>) {
  d.ledger.fund('acct_a', creditsToMicro(100));
  d.webhooks.setTarget('key_acct_a', { url: 'https://hooks.test/in', secret: 'whsec_1' });
  const { job } = await d.video.queue(keyOf('acct_a'), prompt);
  await d.runDue();
  return job;
}

describe('cancel', () => {
  test('a submitted job ends FAILED cancelled, refunded once, webhooked, and its upstream is told to stop it', async () => {
    const d = videoDomain();
    const job = await submittedJob(d);
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(100 - PRICE));
    const cancelled = await d.controls.cancel(keyOf('acct_a', 'live', 'key_other_of_a'), job.id);
    expect(cancelled).toMatchObject({ id: job.id, status: 'FAILED', reason: 'cancelled', creditsUsed: 0 });
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(100));
    expect(d.ledger.entries('acct_a').map((e) => e.kind)).toEqual(['charge', 'refund']);
    expect(d.queue.rows('video_poll')).toEqual([]);
    expect(d.queue.rows('video_cancel')).toEqual([
      { kind: 'video_cancel', ref: job.id, payload: { queueId: `q_${job.id}`, routeId: 'route-0' }, dueInSeconds: 0 },
    ]);
    const [delivery] = d.queue.rows('webhook_delivery');
    expect(JSON.parse(delivery.payload.body as string)).toMatchObject({ event: 'video.failed', data: { id: job.id, status: 'FAILED', reason: 'cancelled' } });
    expect(d.published.map((e) => e.job.status)).toEqual(['PROCESSING', 'FAILED']);
    await d.runDue();
    expect(d.cancelled).toEqual([{ queueId: `q_${job.id}`, spec: expect.objectContaining({ jobId: job.id, upstreamModel: 'upstream-model' }) }]);
    expect(d.queue.rows('video_cancel')).toEqual([]);
    // Terminal now: a second cancel is refused, and moves no money.
    await expect(d.controls.cancel(keyOf('acct_a'), job.id)).rejects.toMatchObject({ type: 'video_not_cancellable', status: 409 });
    expect(d.ledger.entries('acct_a').map((e) => e.kind)).toEqual(['charge', 'refund']);
  });

  test('an upstream that cannot be reached is asked again, a few times, then left', async () => {
    let asked = 0;
    const failing = videoDomain({
      upstream: {
        cancel: async () => {
          asked++;
          throw new Error('unreachable');
        },
      },
    });
    const job = await submittedJob(failing);
    await failing.controls.cancel(keyOf('acct_a'), job.id);
    for (let i = 0; i < 10; i++) {
      await failing.runDue();
      failing.db.advanceSeconds(5);
    }
    expect(asked).toBe(5);
    expect(failing.queue.rows('video_cancel')).toEqual([]);
    expect(failing.ledger.entries('acct_a').map((e) => e.kind)).toEqual(['charge', 'refund']);
  });

  test('a job not yet submitted is cancelled without an upstream call, and is never submitted', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    expect(await d.controls.cancel(keyOf('acct_a'), job.id)).toMatchObject({ status: 'FAILED', reason: 'cancelled' });
    await d.runDue();
    expect(d.submitted).toEqual([]);
    expect(d.queue.rows()).toEqual([]);
    expect(d.ledger.balance('acct_a')).toBe(creditsToMicro(100));
  });

  test('a job cancelled while its submission is under way is cancelled upstream once the submission answers', async () => {
    const submission = gate();
    const d = videoDomain({ submitGate: submission.wait });
    d.ledger.fund('acct_a', creditsToMicro(100));
    const { job } = await d.video.queue(keyOf('acct_a'), prompt);
    const running = d.runDue();
    await d.controls.cancel(keyOf('acct_a'), job.id);
    submission.open();
    await running;
    expect(d.queue.rows('video_cancel')).toMatchObject([{ ref: job.id, payload: { queueId: `q_${job.id}`, routeId: 'route-0' } }]);
    await d.runDue();
    expect(d.cancelled.map((c) => c.queueId)).toEqual([`q_${job.id}`]);
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'FAILED', reason: 'cancelled', queueId: '' });
    expect(d.ledger.entries('acct_a').map((e) => e.kind)).toEqual(['charge', 'refund']);
  });

  test('a cancel that lands while a poll is fetching the finished video wins: the media fetched are dropped, the job refunded once', async () => {
    const fetched = gate();
    const d = videoDomain({
      upstream: {
        poll: async () => {
          await fetched.wait();
          return completed;
        },
      },
    });
    const job = await submittedJob(d);
    d.db.advanceSeconds(30);
    const polling = d.runDue();
    await d.controls.cancel(keyOf('acct_a'), job.id);
    fetched.open();
    await polling;
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'FAILED', reason: 'cancelled' });
    expect(d.media.stored.size).toBe(0);
    expect(d.ledger.entries('acct_a').map((e) => e.kind)).toEqual(['charge', 'refund']);
    expect(d.queue.rows('webhook_delivery')).toHaveLength(1);
  });

  test('a completion that lands first wins: the cancel is refused, the charge stays', async () => {
    const d = videoDomain();
    const job = await submittedJob(d);
    d.answerPolls(completed);
    d.db.advanceSeconds(30);
    await d.runDue();
    await expect(d.controls.cancel(keyOf('acct_a'), job.id)).rejects.toMatchObject({ type: 'video_not_cancellable', code: 'video_not_cancellable' });
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'COMPLETED', progress: 100 });
    expect(d.ledger.entries('acct_a').map((e) => e.kind)).toEqual(['charge']);
    expect(d.queue.rows('video_cancel')).toEqual([]);
  });

  test("a key not allowed the job's model may not cancel it; another account's job is not found", async () => {
    const d = videoDomain();
    const job = await submittedJob(d);
    const chatOnly = { ...keyOf('acct_a', 'live', 'key_chat'), allowedModels: ['svc-chat-1'] };
    await expect(d.controls.cancel(chatOnly, job.id)).rejects.toMatchObject({ type: 'model_forbidden' });
    await expect(d.controls.cancel(keyOf('acct_b'), job.id)).rejects.toMatchObject({ type: 'not_found_error', code: 'job_not_found' });
    // The owner's ID token may.
    expect(await d.controls.cancel({ kind: 'account', accountId: 'acct_a' }, job.id)).toMatchObject({ status: 'FAILED' });
  });
});

describe('progress', () => {
  test('a poll that reports progress keeps it and publishes it once per change; completion makes it 100', async () => {
    const d = videoDomain();
    const job = await submittedJob(d);
    d.answerPolls({ state: 'processing', progress: 40 });
    d.db.advanceSeconds(30);
    await d.runDue();
    d.db.advanceSeconds(5);
    await d.runDue();
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'PROCESSING', progress: 40 });
    expect(d.published.map((e) => [e.job.status, e.job.progress])).toEqual([
      ['PROCESSING', 0],
      ['PROCESSING', 40],
    ]);
    d.answerPolls(completed);
    d.db.advanceSeconds(5);
    await d.runDue();
    expect(await d.video.get('acct_a', job.id)).toMatchObject({ status: 'COMPLETED', progress: 100 });
  });

  test("a provider that knows its progress without a call is read at the service's clock", async () => {
    const d = videoDomain({ upstream: { progressAt: (job, nowMs) => Math.floor((nowMs - job.submittedAt.getTime()) / 1000) } });
    const job = await submittedJob(d);
    d.db.advanceSeconds(12);
    expect((await d.video.get('acct_a', job.id)).progress).toBe(12);
    expect((await d.video.list('acct_a', {})).jobs[0].progress).toBe(12);
  });
});

describe('delete and content', () => {
  test('a completed job is deleted from view with its media, nothing refunded; its content is gone', async () => {
    const d = videoDomain();
    const job = await submittedJob(d);
    d.answerPolls(completed);
    d.db.advanceSeconds(30);
    await d.runDue();
    const video = await d.controls.content('acct_a', job.id, 'video');
    expect(video.contentType).toBe('video/mp4');
    expect((await d.controls.content('acct_a', job.id, 'thumbnail')).contentType).toBe('image/png');
    expect(d.media.stored.size).toBe(2);
    expect(await d.controls.remove(keyOf('acct_a'), job.id)).toMatchObject({ id: job.id, status: 'COMPLETED' });
    expect(d.media.stored.size).toBe(0);
    await expect(d.video.get('acct_a', job.id)).rejects.toMatchObject({ code: 'job_not_found' });
    expect((await d.video.list('acct_a', {})).jobs).toEqual([]);
    await expect(d.controls.remove(keyOf('acct_a'), job.id)).rejects.toMatchObject({ code: 'job_not_found' });
    await expect(d.controls.content('acct_a', job.id, 'video')).rejects.toMatchObject({ code: 'job_not_found' });
    expect(d.ledger.entries('acct_a').map((e) => e.kind)).toEqual(['charge']);
  });

  test('a PROCESSING job can be neither deleted nor downloaded', async () => {
    const d = videoDomain();
    const job = await submittedJob(d);
    await expect(d.controls.remove(keyOf('acct_a'), job.id)).rejects.toMatchObject({ type: 'video_not_deletable', status: 409 });
    await expect(d.controls.content('acct_a', job.id, 'video')).rejects.toMatchObject({ type: 'not_found_error', code: 'video_not_ready' });
  });

  test('a deleted job still marks its place as a cursor', async () => {
    const d = videoDomain();
    d.ledger.fund('acct_a', creditsToMicro(100));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { job } = await d.video.queue(keyOf('acct_a'), prompt);
      await d.finisher.fail(job.id, 'no');
      ids.push(job.id);
      d.db.advanceSeconds(1);
    }
    await d.controls.remove(keyOf('acct_a'), ids[1]);
    expect((await d.video.list('acct_a', { after: ids[1] })).jobs.map((j) => j.id)).toEqual([ids[0]]);
    expect((await d.video.list('acct_a', { order: 'asc' })).jobs.map((j) => j.id)).toEqual([ids[0], ids[2]]);
    expect((await d.video.list('acct_a', { order: 'asc', after: ids[1] })).jobs.map((j) => j.id)).toEqual([ids[2]]);
  });
});
