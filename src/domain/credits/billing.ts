import type { Database } from '../ports/database';
import type { KeyPrincipal } from '../keys/principal';
import { newId } from '../shared/ids';
import * as ledger from './ledger';

export interface Hold {
  id: string;
  amountMicro: number;
  /** Test keys never touch the balance: their holds are bookkeeping only. */
  live: boolean;
  principal: KeyPrincipal;
}

/**
 * Pay-after-the-call billing for chat and images: a hold debits the balance before the provider
 * is called (so concurrent requests cannot overdraw), and settling charges the actual amount and
 * returns the rest. Failure settles at zero: nothing is charged for a request that failed.
 */
export class Billing {
  constructor(private readonly db: Database) {}

  /** `model`: the public model id paid for, recorded in the ledger (usage by model). */
  async hold(principal: KeyPrincipal, amountMicro: number, model: string | null = null): Promise<Hold> {
    const hold: Hold = { id: newId('hold'), amountMicro, live: principal.mode === 'live', principal };
    if (!hold.live || amountMicro <= 0) return hold;
    // One atomic call: the debit, its ledger entry and the expiry row that releases the hold
    // if this instance dies before settling it.
    await ledger.placeHold(this.db, {
      accountId: principal.accountId,
      key: { id: principal.keyId, dailySpendCapMicro: principal.dailySpendCapMicro },
      amountMicro,
      reference: hold.id,
      model,
    });
    return hold;
  }

  /** Charges `actualMicro` (capped at the hold) and releases the rest, once. */
  async settle(hold: Hold, actualMicro: number): Promise<void> {
    if (!hold.live || hold.amountMicro <= 0) return;
    const { principal } = hold;
    await ledger.settleHold(this.db, {
      accountId: principal.accountId,
      key: { id: principal.keyId, dailySpendCapMicro: principal.dailySpendCapMicro },
      holdId: hold.id,
      actualMicro,
    });
  }
}
