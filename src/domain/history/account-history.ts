import { z } from 'zod';
import type { KeyService } from '../keys/key-service';
import type { DeliveryRecord } from '../webhooks/delivery-log';
import type { WebhookRepository } from '../webhooks/webhook-repository';
import { parseInput } from '../shared/validate';
import { integerTextOrNumber } from '../shared/integer-text';
import { usageHistory, type UsageHistory } from './usage';
import { ledgerEntries, type LedgerPage } from './ledger-entries';
import type { HistoryRepository } from './history-repository';

const deliveriesSchema = z.object({ limit: integerTextOrNumber(1, 500).default(100) }).strict();

/**
 * What an account owner reads about the past: usage, ledger entries, webhook deliveries (a key's, the account's).
 * One function each, called by REST (/account/...) and GraphQL alike with the same plain input.
 */
export class AccountHistory {
  constructor(
    private readonly history: HistoryRepository,
    private readonly webhooks: Pick<WebhookRepository, 'listDeliveries'>,
    private readonly keys: Pick<KeyService, 'get'>,
  ) {}

  /** `{ from?, to?, group_by? }`: UTC days, both included (default: the last 30 days). */
  usage(accountId: string, input: unknown, now = new Date()): Promise<UsageHistory> {
    return usageHistory(this.history, accountId, input, now);
  }

  /** `{ first?, after? }`: newest first. */
  ledger(accountId: string, input: unknown): Promise<LedgerPage> {
    return ledgerEntries(this.history, accountId, input);
  }

  /** A key of this account (another's answers 404): its delivery attempts, newest first. */
  async deliveries(accountId: string, keyId: string, input: unknown = {}): Promise<DeliveryRecord[]> {
    const { limit } = parseInput(deliveriesSchema, input);
    await this.keys.get(accountId, keyId);
    return this.webhooks.listDeliveries({ keyId, accountId, limit });
  }

  /** The delivery attempts of the account's own events (its webhook's, not its keys'), newest first. */
  async accountDeliveries(accountId: string, input: unknown = {}): Promise<DeliveryRecord[]> {
    const { limit } = parseInput(deliveriesSchema, input);
    return this.webhooks.listDeliveries({ accountId, accountEvents: true, limit });
  }
}
