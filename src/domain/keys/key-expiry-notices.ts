/**
 * `key.expiring`: the account is told 7 days and 1 day before a key's `expiresAt`. Each notice is
 * a `key_expiring` work row, written in the transaction that sets or changes the key's expiry and
 * due at its moment; only the notices still ahead are written, so a key created 3 days from its
 * expiry gets the 1-day notice alone, and one created less than a day from it gets none.
 *
 * A row names the expiry it was written for (its ref is the event's occurrence, key, `expiresAt`
 * and days), so a change of the expiry writes new rows beside the old ones. When a row comes due
 * the key is read again: the event is recorded (WebhookRepository.recordAccountEvent, once per
 * occurrence) only while the key is not revoked, still expires at that moment, and has not reached
 * the next notice's moment (a notice late past it, the worker having been away, says nothing the
 * next one does not). A changed, cleared or revoked expiry's rows are dropped unsent.
 */
import type { Clock } from '../ports/clock';
import type { SqlExecutor } from '../ports/database';
import type { WebhookRepository } from '../webhooks/webhook-repository';
import type { WorkItem, WorkQueue } from '../work/work-queue';
import type { ApiKey } from './key-record';
import type { KeyRepository } from './key-repository';

/** Days before `expiresAt`, latest notice last. */
export const EXPIRY_NOTICE_DAYS = [7, 1] as const;
const DAY_MS = 86_400_000;

interface NoticePayload {
  accountId: string;
  keyId: string;
  /** RFC 3339, as the key record shows it. */
  expiresAt: string;
  days: number;
}

/** What makes a notice once: the key, the expiry it was for, and the days before it. */
const occurrenceOf = (n: Pick<NoticePayload, 'keyId' | 'expiresAt' | 'days'>) => `${n.keyId}/${n.expiresAt}/${n.days}`;

/** The moment after which a notice `days` before the expiry no longer tells anything: the next notice's, or the expiry itself. */
const staleFrom = (expiresAtMs: number, days: number) => {
  const next = EXPIRY_NOTICE_DAYS.find((d) => d < days) ?? 0;
  return expiresAtMs - next * DAY_MS;
};

export class KeyExpiryNotices {
  constructor(
    private readonly queue: WorkQueue,
    private readonly keys: Pick<KeyRepository, 'findActive'>,
    private readonly webhooks: Pick<WebhookRepository, 'transaction' | 'recordAccountEvent'>,
    private readonly clock: Clock,
  ) {}

  /** In the transaction that wrote `key`'s expiry: a row for each notice still ahead of now. */
  async schedule(tx: SqlExecutor, key: ApiKey): Promise<void> {
    if (!key.expiresAt) return;
    const expiresAt = key.expiresAt.toISOString();
    for (const days of EXPIRY_NOTICE_DAYS) {
      const dueInMs = key.expiresAt.getTime() - days * DAY_MS - this.clock.now();
      if (dueInMs <= 0) continue;
      const payload: NoticePayload = { accountId: key.accountId, keyId: key.id, expiresAt, days };
      await this.queue.schedule(tx, 'key_expiring', occurrenceOf(payload), payload, dueInMs / 1000);
    }
  }

  /** The `key_expiring` work handler. */
  readonly handle = async (item: WorkItem): Promise<void> => {
    const notice = item.payload as unknown as NoticePayload;
    const key = await this.keys.findActive(notice.accountId, notice.keyId);
    const current = key?.expiresAt?.toISOString() === notice.expiresAt;
    if (!key || !current || this.clock.now() >= staleFrom(key.expiresAt!.getTime(), notice.days)) {
      await this.queue.done(item);
      return;
    }
    await this.webhooks.transaction(async (tx) => {
      await this.webhooks.recordAccountEvent(tx, {
        accountId: key.accountId,
        type: 'key.expiring',
        occurrence: occurrenceOf(notice),
        data: { keyId: key.id, name: key.name, expiresAt: notice.expiresAt, days: notice.days },
      });
      await this.queue.done(item, tx);
    });
  };
}
