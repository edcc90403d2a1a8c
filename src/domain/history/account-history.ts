import { z } from 'zod';
import type { Database } from '../ports/database';
import type { KeyService } from '../keys/key-service';
import { listDeliveries, type DeliveryRecord } from '../webhooks/delivery-log';
import { parseInput } from '../shared/validate';
import { integerTextOrNumber } from '../shared/integer-text';
import { usageHistory, type UsageHistory } from './usage';
import { ledgerEntries, type LedgerPage } from './ledger-entries';

const deliveriesSchema = z.object({ limit: integerTextOrNumber(1, 500).default(100) }).strict();

/**
 * What an account owner reads about the past: usage, ledger entries, a key's webhook deliveries.
 * One function each, called by REST (/account/...) and GraphQL alike with the same plain input.
 */
export class AccountHistory {
  constructor(
    private readonly db: Database,
    private readonly keys: Pick<KeyService, 'get'>,
  ) {}

  /** `{ from?, to?, group_by? }`: UTC days, both included (default: the last 30 days). */
  usage(accountId: string, input: unknown, now = new Date()): Promise<UsageHistory> {
    return usageHistory(this.db, accountId, input, now);
  }

  /** `{ first?, after? }`: newest first. */
  ledger(accountId: string, input: unknown): Promise<LedgerPage> {
    return ledgerEntries(this.db, accountId, input);
  }

  /** A key of this account (another's answers 404): its delivery attempts, newest first. */
  async deliveries(accountId: string, keyId: string, input: unknown = {}): Promise<DeliveryRecord[]> {
    const { limit } = parseInput(deliveriesSchema, input);
    await this.keys.get(accountId, keyId);
    return listDeliveries(this.db, { keyId, accountId, limit });
  }
}
