import type { SqlExecutor } from '../ports/database';
import type { VideoJob } from '../video/video-job';
import type { WorkQueue } from '../work/work-queue';
import type { WebhookRepository } from './webhook-repository';
import { newId } from '../shared/ids';
import { unixSeconds } from '../shared/time';

/**
 * One delivery's work row: a key's video event (written here), or an account's event (written by
 * the account events' outbox, svc_account_event, with no key and no job).
 */
export interface DeliveryPayload {
  eventId: string;
  deliveryId: string;
  /** `video.completed`, `video.failed`, or an account event's type (`balance.low`, …). */
  event: string;
  /** The key whose webhook it goes to; null: the account's webhook. */
  keyId: string | null;
  accountId: string;
  jobId: string | null;
  url: string;
  /** The secret at the time of the event: in-flight retries keep it after a regeneration. */
  secret: string;
  /** The exact bytes sent on every attempt. */
  body: string;
  attempt: number;
}

/** SPEC's event payload for a terminal job. */
export function eventBody(job: VideoJob, created: number): { id: string; event: 'video.completed' | 'video.failed'; body: string } {
  const completed = job.status === 'COMPLETED';
  const event = completed ? 'video.completed' : 'video.failed';
  const id = `wh_${job.id}_${completed ? 'completed' : 'failed'}`;
  const data: Record<string, unknown> = { id: job.id, status: job.status };
  if (completed) data.url = job.url;
  else data.reason = job.reason;
  data.credits_used = job.creditsUsed ?? 0;
  return { id, event, body: JSON.stringify({ id, event, created, data }) };
}

/**
 * Called in the transaction that made the job terminal: when the job's key has a webhook, the
 * first delivery attempt is scheduled now, so a crash can never lose the event.
 */
export async function scheduleJobWebhook(tx: SqlExecutor, webhooks: WebhookRepository, queue: WorkQueue, job: VideoJob): Promise<boolean> {
  const target = await webhooks.target(job.apiKeyId, tx);
  if (!target) return false;
  const { id, event, body } = eventBody(job, unixSeconds());
  const payload: DeliveryPayload = {
    eventId: id,
    deliveryId: newId('dlv'),
    event,
    keyId: job.apiKeyId,
    accountId: job.accountId,
    jobId: job.id,
    url: target.url,
    secret: target.secret,
    body,
    attempt: 1,
  };
  await queue.schedule(tx, 'webhook_delivery', payload.deliveryId, payload);
  return true;
}
