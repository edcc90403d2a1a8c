import type { SqlExecutor } from '../ports/database';
import type { ChargeInput } from '../credits/ledger';

/**
 * What a video job pays with: the ledger's full charge at acceptance and its refund of a failure,
 * each in the job's transaction (the credit ledger, credits/ledger.ts, is what services.ts passes).
 */
export interface VideoLedger {
  charge(tx: SqlExecutor, input: ChargeInput): Promise<void>;
  /** True when this call refunded the charge of `reference`. */
  refundOnce(tx: SqlExecutor, input: { accountId: string; reference: string; reason: string }): Promise<boolean>;
}
