import type { Database } from '../ports/database';
import type { KeyPrincipal } from '../keys/principal';
import { newId } from '../shared/ids';
import * as ledger from './ledger';

/** A hold not settled within this time (the instance crashed mid-call) is released by the worker. */
export const HOLD_EXPIRY_SECONDS = 15 * 60;

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

  async hold(principal: KeyPrincipal, amountMicro: number): Promise<Hold> {
    const hold: Hold = { id: newId('hold'), amountMicro, live: principal.mode === 'live', principal };
    if (!hold.live || amountMicro <= 0) return hold;
    await this.db.transaction(async (tx) => {
      await ledger.placeHold(tx, {
        accountId: principal.accountId,
        key: { id: principal.keyId, dailySpendCapMicro: principal.dailySpendCapMicro },
        amountMicro,
        reference: hold.id,
      });
      // The outbox row that releases the hold if this instance dies before settling it.
      await tx.run(
        `insert into work_items (kind, ref, payload, due_at) values ('hold_expiry', ?, ?::jsonb, now() + make_interval(secs => ?))`,
        [hold.id, JSON.stringify({ accountId: principal.accountId, keyId: principal.keyId }), HOLD_EXPIRY_SECONDS],
      );
    });
    return hold;
  }

  /** Charges `actualMicro` (capped at the hold) and releases the rest, once. */
  async settle(hold: Hold, actualMicro: number): Promise<void> {
    if (!hold.live || hold.amountMicro <= 0) return;
    const { principal } = hold;
    await this.db.transaction(async (tx) => {
      await ledger.settleHold(tx, {
        accountId: principal.accountId,
        key: { id: principal.keyId, dailySpendCapMicro: principal.dailySpendCapMicro },
        holdId: hold.id,
        actualMicro,
      });
      await tx.run(`delete from work_items where kind = 'hold_expiry' and ref = ?`, [hold.id]);
    });
  }
}
