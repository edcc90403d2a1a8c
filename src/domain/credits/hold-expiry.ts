import type { Database } from '../ports/database';
import type { WorkItem, WorkQueue } from '../work/work-queue';
import type { Ledger } from './ledger';
import { NO_BUDGETS } from './budgets';

/**
 * The `hold_expiry` work handler: a hold still open long after its call (the instance died
 * mid-call) is released in full. The caller is not charged for a call we cannot account for.
 */
export function holdExpiryHandler(db: Database, ledger: Ledger, queue: WorkQueue) {
  return async (item: WorkItem): Promise<void> => {
    const { accountId, keyId } = item.payload as { accountId: string; keyId: string };
    // Settling deletes the expiry row too; `done` covers a hold that was settled meanwhile.
    await ledger.settleHold(db, { accountId, key: { id: keyId, budgets: NO_BUDGETS }, holdId: item.ref, actualMicro: 0 });
    await queue.done(item);
  };
}
