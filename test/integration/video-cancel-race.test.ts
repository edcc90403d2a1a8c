/**
 * A cancel and the poll that finds the job done, racing, many times over the real database: each
 * job ends in exactly one terminal state, with one refund (cancelled) or its charge kept
 * (completed), one webhook scheduled and one terminal event, and no media left behind by the side
 * that lost. The simulator's timeline runs on a fake clock the test steps, so the poll finds the
 * video finished exactly when the test says; the worker is off (WORKER_CONCURRENCY=0) and the test
 * runs the work rows itself.
 */
import { fakeClock } from '../support/fake-clock';
import { useTestServices } from '../support/test-services';
import type { JobEvent } from '../../src/domain/events/job-events';
import type { KeyPrincipal } from '../../src/domain/keys/principal';
import type { VideoJob } from '../../src/domain/video/video-job';
import type { WorkItem } from '../../src/domain/work/work-queue';

const clock = fakeClock();
const t = useTestServices({ WORKER_CONCURRENCY: '0', SIMULATOR_VIDEO_SECONDS: '5', WEBHOOK_ALLOW_LOCAL: '1' }, { clock });
const PRICE = 10;
const ROUNDS = 24;

const db = () => t.database.db;
const count = async (sql: string, params: unknown[]) => Number((await db().one<{ n: string }>(sql, params))!.n);

/** A fresh account (its own rate window) holding 100 credits, and a live key of it with a webhook. */
async function liveKey(): Promise<KeyPrincipal> {
  const account = await t.newAccount(100);
  const { secret } = await t.newKey(account);
  const key = await t.services.keys.authenticate(secret);
  await t.services.keys.configureWebhook(account.id, key.keyId, { url: 'http://127.0.0.1:9/hooks' });
  return key;
}

/**
 * Queues a job, submits it (its first work row), steps the simulator's clock past its finish and
 * claims its next poll, as a worker about to find the video done would have.
 */
async function finishedUpstream(key: KeyPrincipal): Promise<{ job: VideoJob; poll: WorkItem }> {
  const { job } = await t.services.video.queue(key, { model: 'svc-2.5-preview-text-to-video', prompt: 'a race', duration: '5s', resolution: '480p' });
  await t.services.videoRunner.handle(await claimPoll(job.id));
  const { submittedAt } = await t.services.video.get(key.accountId, job.id);
  await clock.tickAsync(Math.max(0, submittedAt!.getTime() + 5_000 - clock.now()));
  // The poll is due on the database's clock: brought forward rather than waited for.
  await db().run(`update work_items set due_at = now() where kind = 'video_poll' and ref = ?`, [job.id]);
  return { job, poll: await claimPoll(job.id) };
}

async function claimPoll(jobId: string): Promise<WorkItem> {
  const item = (await t.services.workQueue.claim(100)).find((i) => i.kind === 'video_poll' && i.ref === jobId);
  if (!item) throw new Error(`no due poll for ${jobId}`);
  return item;
}

/** Everything one job left: its state, its money, its webhook rows, its terminal events, its media. */
async function outcomeOf(key: KeyPrincipal, job: VideoJob, events: JobEvent[]) {
  const now = await t.services.video.get(key.accountId, job.id);
  return {
    status: now.status,
    reason: now.reason,
    balance: await t.balance({ id: key.accountId }),
    refunds: await count(`select count(*) as n from ledger_entries where kind = 'refund' and reference = ?`, [job.id]),
    webhooks: await count(`select count(*) as n from work_items where kind = 'webhook_delivery' and payload->>'jobId' = ?`, [job.id]),
    terminalEvents: events.filter((e) => e.job.id === job.id && e.job.status !== 'PROCESSING').length,
    media: await count(`select count(*) as n from media_objects where account_id = ?`, [key.accountId]),
  };
}

const cancelledOutcome = { status: 'FAILED', reason: 'cancelled', balance: 100, refunds: 1, webhooks: 1, terminalEvents: 1, media: 0 };
// The video and its thumbnail are kept.
const completedOutcome = { status: 'COMPLETED', reason: null, balance: 100 - PRICE, refunds: 0, webhooks: 1, terminalEvents: 1, media: 2 };

let events: JobEvent[];
let unsubscribe: () => void;
beforeEach(() => {
  events = [];
  unsubscribe = t.services.events.subscribe((e) => void events.push(e));
});
afterEach(() => unsubscribe());

test('a cancel before the poll: cancelled, refunded once; the poll after it does nothing', async () => {
  const key = await liveKey();
  const { job, poll } = await finishedUpstream(key);
  await t.services.videoControls.cancel(key, job.id);
  await t.services.videoRunner.handle(poll);
  expect(await outcomeOf(key, job, events)).toEqual(cancelledOutcome);
});

test('a poll before the cancel: completed, charged; the cancel is refused', async () => {
  const key = await liveKey();
  const { job, poll } = await finishedUpstream(key);
  await t.services.videoRunner.handle(poll);
  await expect(t.services.videoControls.cancel(key, job.id)).rejects.toMatchObject({ type: 'video_not_cancellable' });
  expect(await outcomeOf(key, job, events)).toEqual(completedOutcome);
});

/**
 * Starts the cancel while the poll is under way: at once, or once the poll has stored the video
 * (`afterSaves` 1) or its thumbnail too (2, the moment before it completes the job), then
 * `yields` turns of the event loop later, so the two meet at every step of the finish.
 */
async function race(poll: () => Promise<void>, cancel: () => Promise<VideoJob>, afterSaves: 0 | 1 | 2, yields: number) {
  const media = t.services.media;
  const save = media.save.bind(media);
  // The cancel's outcome, settled as it starts: a refusal before the poll ends is an answer, not an
  // unhandled rejection.
  let cancelling: Promise<PromiseSettledResult<VideoJob>> | undefined;
  const start = async () => {
    for (let i = 0; i < yields; i++) await new Promise((resolve) => setImmediate(resolve));
    return cancel();
  };
  const settle = () => Promise.allSettled([start()]).then(([outcome]) => outcome);
  let saves = 0;
  media.save = async (...args) => {
    const saved = await save(...args);
    if (++saves === afterSaves) cancelling = settle();
    return saved;
  };
  try {
    if (afterSaves === 0) cancelling = settle();
    const polled = await Promise.allSettled([poll()]);
    // A poll that stopped before its saves (the cancel came first) leaves the cancel to start now.
    const cancelled = await (cancelling ??= settle());
    return [polled[0], cancelled] as const;
  } finally {
    media.save = save;
  }
}

test(`${ROUNDS} races of a cancel and the poll that finds the job done end in one state each, with the money right`, async () => {
  const seen = new Set<string>();
  for (let round = 0; round < ROUNDS; round++) {
    const key = await liveKey();
    const { job, poll } = await finishedUpstream(key);
    const [polled, cancelled] = await race(
      () => t.services.videoRunner.handle(poll),
      () => t.services.videoControls.cancel(key, job.id),
      (round % 3) as 0 | 1 | 2,
      Math.floor(round / 3) % 4,
    );
    expect(polled.status).toBe('fulfilled');
    const outcome = await outcomeOf(key, job, events);
    if (cancelled.status === 'fulfilled') {
      expect([round, outcome]).toEqual([round, cancelledOutcome]);
    } else {
      expect([round, cancelled.reason]).toEqual([round, expect.objectContaining({ type: 'video_not_cancellable' })]);
      expect([round, outcome]).toEqual([round, completedOutcome]);
    }
    seen.add(outcome.status);
  }
  // A cancel started with the poll wins (the poll still has the video to make); one started as the
  // poll completes the job mostly loses: both ends are reached.
  expect([...seen].sort()).toEqual(['COMPLETED', 'FAILED']);
});
