import type { WebhookSender } from '../ports/webhook-sender';
import type { WorkItem, WorkQueue } from '../work/work-queue';
import type { Clock } from '../ports/clock';
import { systemClock } from '../shared/system-clock';
import { unixSeconds } from '../shared/time';
import { signWebhook } from './webhook-signature';
import type { DeliveryPayload } from './webhook-events';
import type { WebhookRepository } from './webhook-repository';

/** What one attempt did, for logs and metrics (never the URL's secret parts or the body). */
export interface DeliveryAttempt {
  outcome: 'success' | 'failure';
  deliveryId: string;
  eventId: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * One delivery attempt per work item run, for a key's webhook or the account's alike: sign with
 * the secret captured at event time, POST, log the attempt, then finish (2xx, or attempts used up)
 * or reschedule after the next delay (WEBHOOK_RETRY_DELAYS). A cleared webhook or a revoked key
 * stops the retries. A webhook moved
 * to another URL since the event takes its retries there, signed with the secret it was given
 * with that URL, never to the endpoint its owner moved away from. A secret regenerated on the
 * same URL does not change what pending retries are signed with (SPEC).
 */
export class WebhookDeliverer {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly queue: WorkQueue,
    private readonly sender: WebhookSender,
    private readonly retryDelaysSeconds: number[],
    private readonly onAttempt: (attempt: DeliveryAttempt) => void = () => undefined,
    /** What an attempt's duration and its signature's timestamp are read from. */
    private readonly clock: Clock = systemClock,
  ) {}

  get maxAttempts(): number {
    return this.retryDelaysSeconds.length + 1;
  }

  handle = async (item: WorkItem): Promise<void> => {
    const stored = item.payload as unknown as DeliveryPayload;
    const target = stored.keyId ? await this.webhooks.target(stored.keyId) : await this.webhooks.accountTarget(stored.accountId);
    if (!target) {
      await this.queue.done(item);
      return;
    }
    // Moved since the event: this attempt and the next go to the new URL, with the secret given with it.
    const p: DeliveryPayload = target.url === stored.url ? stored : { ...stored, url: target.url, secret: target.secret };
    const started = this.clock.monotonic();
    const result = await this.sender.post(
      p.url,
      {
        'Content-Type': 'application/json',
        'User-Agent': 'Svc-Webhook/1.0',
        'X-Svc-Event': p.event,
        'X-Svc-Signature': signWebhook(p.secret, unixSeconds(new Date(this.clock.now())), p.body),
        'X-Svc-Delivery-Id': p.deliveryId,
        'X-Svc-Delivery-Attempt': String(p.attempt),
      },
      p.body,
    );
    // Any 2xx is a delivery, whatever the body; a 3xx is a failure (redirects are not followed).
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const durationMs = Math.round(this.clock.monotonic() - started);
    const error = ok ? null : (result.error ?? `HTTP ${result.statusCode}`);
    this.onAttempt({
      outcome: ok ? 'success' : 'failure',
      deliveryId: p.deliveryId,
      eventId: p.eventId,
      attempt: p.attempt,
      statusCode: result.statusCode,
      error,
      durationMs,
    });
    await this.webhooks.transaction(async (tx) => {
      await this.webhooks.logAttempt(tx, { ...p, attempt: p.attempt, statusCode: result.statusCode, error, durationMs });
      if (ok || p.attempt >= this.maxAttempts) await this.queue.done(item, tx);
      else await this.queue.retryLater(item, this.retryDelaysSeconds[p.attempt - 1], { ...p, attempt: p.attempt + 1 }, tx);
    });
  };
}
