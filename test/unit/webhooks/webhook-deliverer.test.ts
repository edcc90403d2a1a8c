/**
 * The webhook deliverer's decisions on in-memory repositories: a 2xx ends the delivery; a failure
 * is retried after each WEBHOOK_RETRY_DELAYS delay with the same bytes and the next attempt
 * number, and given up after the last; every attempt is logged; a cleared webhook or a revoked
 * key stops the retries unsent; a webhook moved since the event takes its retries to the new URL,
 * signed with the secret given with it.
 */
import { createHmac } from 'node:crypto';
import type { WebhookSender } from '../../../src/domain/ports/webhook-sender';
import type { VideoJob } from '../../../src/domain/video/video-job';
import { WebhookDeliverer, type DeliveryAttempt } from '../../../src/domain/webhooks/webhook-deliverer';
import { scheduleJobWebhook, type DeliveryPayload } from '../../../src/domain/webhooks/webhook-events';
import { FakeDatabase } from '../../support/fakes/fake-database';
import { FakeWebhookRepository } from '../../support/fakes/fake-webhooks';
import { FakeWorkQueue } from '../../support/fakes/fake-work-queue';

const RETRY_DELAYS = [5, 25];

interface Sent {
  url: string;
  headers: Record<string, string>;
  body: string;
}

function deliveries(answers: Array<number | null>) {
  const db = new FakeDatabase();
  const queue = new FakeWorkQueue(db);
  const webhooks = new FakeWebhookRepository(db);
  const sent: Sent[] = [];
  const sender: WebhookSender = {
    post: async (url, headers, body) => {
      sent.push({ url, headers, body });
      const statusCode = answers.length > 0 ? answers.shift()! : 200;
      return { statusCode, error: statusCode === null ? 'connection refused' : null };
    },
  };
  const reported: DeliveryAttempt[] = [];
  const deliverer = new WebhookDeliverer(webhooks, queue, sender, RETRY_DELAYS, (a) => reported.push(a));
  const job: VideoJob = {
    id: 'vid_1',
    accountId: 'acct_a',
    apiKeyId: 'key_a',
    testMode: false,
    model: 'svc-2.5-preview-text-to-video',
    kind: 'video',
    provider: 'simulator',
    routeId: null,
    spec: { jobId: 'vid_1', upstreamModel: 'm', kind: 'video', durationSeconds: 5 },
    queueId: 'q_1',
    status: 'COMPLETED',
    creditsCharged: 15,
    creditsUsed: 15,
    progress: 100,
    url: 'https://media.test/med_1.mp4',
    mediaId: 'med_1',
    thumbnailMediaId: null,
    reason: null,
    submittedAt: db.now(),
    finishedAt: db.now(),
    deadlineAt: db.now(),
    createdAt: db.now(),
    updatedAt: db.now(),
  };
  /** The job's terminal event, scheduled as the finisher does. */
  const finishJob = () => db.transaction((tx) => scheduleJobWebhook(tx, webhooks, queue, job));
  /** Runs the due deliveries once, as the worker would. */
  const runDue = async () => {
    for (const item of await queue.claim(10)) await deliverer.handle(item);
  };
  /** An account event's first attempt, as the account events' outbox (svc_account_event) writes it. */
  const accountEvent = () => {
    const body = JSON.stringify({ id: 'evt_1', type: 'balance.low', created: 1, data: { accountId: 'acct_a', balance: 4, lowBalanceAlert: 5 } });
    const payload: DeliveryPayload = {
      eventId: 'evt_1',
      deliveryId: 'dlv_1',
      event: 'balance.low',
      keyId: null,
      accountId: 'acct_a',
      jobId: null,
      url: 'https://acct.test/in',
      secret: 'whsec_acct',
      body,
      attempt: 1,
    };
    return db.transaction((tx) => queue.schedule(tx, 'webhook_delivery', payload.deliveryId, payload));
  };
  return { db, queue, webhooks, sent, reported, finishJob, accountEvent, runDue };
}

const signedWith = (secret: string, s: Sent) => {
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(s.headers['X-Svc-Signature'])!;
  return createHmac('sha256', secret).update(`${t}.${s.body}`).digest('hex') === v1;
};

test('a 2xx is a delivery: one attempt, logged as such, and nothing left to retry', async () => {
  const d = deliveries([204]);
  d.webhooks.setTarget('key_a', { url: 'https://hooks.test/in', secret: 'whsec_1' });
  expect(await d.finishJob()).toBe(true);
  await d.runDue();
  expect(d.sent).toHaveLength(1);
  expect(d.sent[0]).toMatchObject({ url: 'https://hooks.test/in', headers: { 'X-Svc-Event': 'video.completed', 'X-Svc-Delivery-Attempt': '1' } });
  expect(signedWith('whsec_1', d.sent[0])).toBe(true);
  expect(d.webhooks.attempts).toMatchObject([{ jobId: 'vid_1', keyId: 'key_a', accountId: 'acct_a', attempt: 1, statusCode: 204, error: null }]);
  expect(d.reported.map((a) => a.outcome)).toEqual(['success']);
  expect(d.queue.rows()).toEqual([]);
});

test('failures are retried after each delay, the same bytes under the next attempt number, and given up after the last', async () => {
  const d = deliveries([500, null, 503]);
  d.webhooks.setTarget('key_a', { url: 'https://hooks.test/in', secret: 'whsec_1' });
  await d.finishJob();
  await d.runDue();
  expect(d.queue.rows('webhook_delivery')).toMatchObject([{ dueInSeconds: RETRY_DELAYS[0], payload: { attempt: 2 } }]);
  // Not due before its delay.
  d.db.advanceSeconds(RETRY_DELAYS[0] - 1);
  await d.runDue();
  expect(d.sent).toHaveLength(1);
  d.db.advanceSeconds(1);
  await d.runDue();
  expect(d.queue.rows('webhook_delivery')).toMatchObject([{ dueInSeconds: RETRY_DELAYS[1], payload: { attempt: 3 } }]);
  d.db.advanceSeconds(RETRY_DELAYS[1]);
  await d.runDue();
  expect(d.queue.rows()).toEqual([]);
  d.db.advanceSeconds(3600);
  await d.runDue();

  expect(d.sent.map((s) => s.headers['X-Svc-Delivery-Attempt'])).toEqual(['1', '2', '3']);
  expect(new Set(d.sent.map((s) => s.body)).size).toBe(1);
  expect(new Set(d.sent.map((s) => s.headers['X-Svc-Delivery-Id'])).size).toBe(1);
  expect(d.webhooks.attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
    [1, 500, 'HTTP 500'],
    [2, null, 'connection refused'],
    [3, 503, 'HTTP 503'],
  ]);
  expect(d.reported.map((a) => a.outcome)).toEqual(['failure', 'failure', 'failure']);
});

test('a 3xx is a failure (redirects are not followed), retried', async () => {
  const d = deliveries([302, 200]);
  d.webhooks.setTarget('key_a', { url: 'https://hooks.test/in', secret: 'whsec_1' });
  await d.finishJob();
  await d.runDue();
  d.db.advanceSeconds(RETRY_DELAYS[0]);
  await d.runDue();
  expect(d.webhooks.attempts.map((a) => a.statusCode)).toEqual([302, 200]);
  expect(d.queue.rows()).toEqual([]);
});

test('a key with no webhook gets no delivery scheduled; one cleared (or revoked) before a retry stops it unsent', async () => {
  const none = deliveries([]);
  expect(await none.finishJob()).toBe(false);
  expect(none.queue.rows()).toEqual([]);

  const d = deliveries([500]);
  d.webhooks.setTarget('key_a', { url: 'https://hooks.test/in', secret: 'whsec_1' });
  await d.finishJob();
  await d.runDue();
  d.webhooks.setTarget('key_a', undefined);
  d.db.advanceSeconds(RETRY_DELAYS[0]);
  await d.runDue();
  expect(d.sent).toHaveLength(1);
  expect(d.webhooks.attempts).toHaveLength(1);
  expect(d.queue.rows()).toEqual([]);
});

test('a webhook moved since the event takes the retries to its new URL, signed with the secret given with it', async () => {
  const d = deliveries([500, 500, 200]);
  d.webhooks.setTarget('key_a', { url: 'https://old.test/in', secret: 'whsec_old' });
  await d.finishJob();
  await d.runDue();
  d.webhooks.setTarget('key_a', { url: 'https://new.test/in', secret: 'whsec_new' });
  d.db.advanceSeconds(RETRY_DELAYS[0]);
  await d.runDue();
  d.db.advanceSeconds(RETRY_DELAYS[1]);
  await d.runDue();
  expect(d.sent.map((s) => s.url)).toEqual(['https://old.test/in', 'https://new.test/in', 'https://new.test/in']);
  expect(signedWith('whsec_old', d.sent[0])).toBe(true);
  expect(d.sent.slice(1).every((s) => signedWith('whsec_new', s))).toBe(true);
});

test('a secret regenerated on the same URL does not change what pending retries are signed with', async () => {
  const d = deliveries([500, 200]);
  d.webhooks.setTarget('key_a', { url: 'https://hooks.test/in', secret: 'whsec_1' });
  await d.finishJob();
  await d.runDue();
  d.webhooks.setTarget('key_a', { url: 'https://hooks.test/in', secret: 'whsec_2' });
  d.db.advanceSeconds(RETRY_DELAYS[0]);
  await d.runDue();
  expect(d.sent.every((s) => signedWith('whsec_1', s))).toBe(true);
});

test("an account event goes to the account's webhook, not a key's: signed, logged without key or job, retried, and stopped once the webhook is cleared", async () => {
  const d = deliveries([500, 500]);
  d.webhooks.setTarget('key_a', { url: 'https://key.test/in', secret: 'whsec_key' });
  d.webhooks.setAccountTarget('acct_a', { url: 'https://acct.test/in', secret: 'whsec_acct' });
  await d.accountEvent();
  await d.runDue();
  expect(d.sent).toHaveLength(1);
  expect(d.sent[0]).toMatchObject({ url: 'https://acct.test/in', headers: { 'X-Svc-Event': 'balance.low', 'X-Svc-Delivery-Id': 'dlv_1' } });
  expect(signedWith('whsec_acct', d.sent[0])).toBe(true);
  expect(d.webhooks.attempts).toMatchObject([{ eventId: 'evt_1', keyId: null, jobId: null, accountId: 'acct_a', attempt: 1, statusCode: 500 }]);
  d.db.advanceSeconds(RETRY_DELAYS[0]);
  await d.runDue();
  expect(d.sent.map((s) => [s.url, s.headers['X-Svc-Delivery-Attempt']])).toEqual([
    ['https://acct.test/in', '1'],
    ['https://acct.test/in', '2'],
  ]);
  d.webhooks.setAccountTarget('acct_a', undefined);
  d.db.advanceSeconds(RETRY_DELAYS[1]);
  await d.runDue();
  expect(d.sent).toHaveLength(2);
  expect(d.queue.rows()).toEqual([]);
});
